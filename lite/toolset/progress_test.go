package toolset

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// fakeClock is a clock a test moves.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time      { return c.t }
func (c *fakeClock) add(d time.Duration) { c.t = c.t.Add(d) }
func testProgress(tty bool) (*Progress, *bytes.Buffer, *fakeClock) {
	var b bytes.Buffer
	c := &fakeClock{t: time.Unix(1e9, 0)}
	p := NewProgress(&b, tty)
	p.now = c.now
	return p, &b, c
}

func TestProgress_TerminalRewritesOneLine(t *testing.T) {
	p, b, clock := testProgress(true)
	p.Step("pulling manifest")
	p.Step("pulling manifest") // the same step: nothing
	p.Step("pulling 3f2a5e1b0c44")
	clock.add(time.Second)
	p.Count(512<<20, 1<<30)
	clock.add(10 * time.Millisecond)
	p.Count(600<<20, 1<<30) // too soon: not drawn
	p.Count(1<<30, 1<<30)   // the end always is
	p.Done("pulled qwen3:1.7b")
	assert.Equal(t, "\r\x1b[Kpulling manifest\r\x1b[Kpulling 3f2a5e1b0c44"+
		"\r\x1b[Kpulling 3f2a5e1b0c44  50% (512.0 MiB of 1.0 GiB)"+
		"\r\x1b[Kpulling 3f2a5e1b0c44 100% (1.0 GiB of 1.0 GiB)"+
		"\r\x1b[Kpulled qwen3:1.7b\n", b.String())
	assert.NotContains(t, b.String(), "\n\r", "no line is left behind")
}

func TestProgress_PipeGetsALinePerStep(t *testing.T) {
	p, b, clock := testProgress(false)
	p.Step("pulling manifest")
	p.Step("pulling 3f2a5e1b0c44")
	for i := int64(1); i <= 100; i++ {
		clock.add(time.Second)
		p.Count(i, 100)
	}
	p.Step("verifying sha256 digest")
	p.Done("")
	p.Done("pulled qwen3:1.7b")
	assert.Equal(t, "pulling manifest\npulling 3f2a5e1b0c44\nverifying sha256 digest\npulled qwen3:1.7b\n", b.String())
}

func TestProgress_UnknownTotalAndOutsideText(t *testing.T) {
	p, b, clock := testProgress(true)
	p.Step("status\x1b[31m from\ra server " + strings.Repeat("x", 100))
	clock.add(time.Second)
	p.Count(3<<20, 0)
	line := b.String()[strings.LastIndex(b.String(), "\r\x1b[K")+4:]
	assert.NotContains(t, line, "\x1b", "control characters are blanked")
	assert.NotContains(t, line, "\r")
	assert.LessOrEqual(t, len([]rune(line)), ProgressWidth)
	assert.True(t, strings.HasSuffix(line, "… 3.0 MiB"), line)
}

func TestProgress_NilShowsNothing(t *testing.T) {
	var p *Progress
	p.Step("x")
	p.Count(1, 2)
	p.Done("y")
	ran := false
	assert.NoError(t, p.After(0, "z", func() error { ran = true; return nil }))
	assert.True(t, ran)
}

// syncWriter signals each write, so a test waits for output, not time.
type syncWriter struct {
	mu    sync.Mutex
	b     bytes.Buffer
	wrote chan struct{}
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	select {
	case w.wrote <- struct{}{}:
	default:
	}
	return w.b.Write(p)
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

func TestProgress_AfterShowsOnlyWhatIsSlow(t *testing.T) {
	w := &syncWriter{wrote: make(chan struct{}, 1)}
	p := NewProgress(w, true)
	assert.NoError(t, p.After(time.Hour, "compiling", func() error { return nil }))
	assert.Empty(t, w.String(), "quick: nothing shown")

	assert.NoError(t, p.After(time.Nanosecond, "compiling the WASM tool x", func() error {
		<-w.wrote // until the step is on the screen
		return nil
	}))
	assert.Equal(t, "\r\x1b[Kcompiling the WASM tool x\r\x1b[K", w.String(), "shown, then erased")
}
