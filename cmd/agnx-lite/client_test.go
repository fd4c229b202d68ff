package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// daemon is lite.Serve running in this process on the cli's data dir.
type daemon struct {
	url      string
	err      error // set when finished is closed
	finished chan struct{}
}

// serve starts the daemon and stops it when the test ends.
func (c *cli) serve() *daemon {
	c.t.Helper()
	cfg, err := config.Locate(c.cfg, c.dir)
	require.NoError(c.t, err)
	_, err = config.Init(cfg)
	require.NoError(c.t, err)
	// Any free port, taken at the bind (a port chosen beforehand may be
	// another test process's by then); serve.json tells the CLI which.
	cfg.Server.Port = 0
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	d := &daemon{finished: make(chan struct{})}
	go func() {
		defer close(d.finished)
		d.err = lite.Serve(ctx, cfg, &lite.ServeOptions{Version: "test", Ready: func(u string) { ready <- u }})
	}()
	select {
	case d.url = <-ready:
	case <-d.finished:
		c.t.Fatalf("serve: %v", d.err)
	}
	c.t.Cleanup(func() {
		cancel()
		<-d.finished
	})
	return d
}

// syncBuffer is an output a test can wait on.
type syncBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	changed chan struct{}
}

func newSyncBuffer() *syncBuffer { return &syncBuffer{changed: make(chan struct{}, 1)} }

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case s.changed <- struct{}{}:
	default:
	}
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor waits until the output holds want.
func (s *syncBuffer) waitFor(t *testing.T, want string) {
	t.Helper()
	deadline := time.NewTimer(time.Minute) // a bound for a loaded machine, not a wait
	defer deadline.Stop()
	for !strings.Contains(s.String(), want) {
		select {
		case <-s.changed:
		case <-deadline.C:
			t.Fatalf("no %q in output:\n%s", want, s.String())
		}
	}
}

func TestCLI_DaemonRunAndChat(t *testing.T) {
	c := newCLI(t)
	c.serve()
	code, out, errs := c.run("run", "-m", "hello there")
	require.Equal(t, 0, code, errs)
	assert.Equal(t, "echo: hello there\n", out)
	assert.Empty(t, errs)
	code, out, errs = c.run("run", "-m", "use list_dir {}")
	require.Equal(t, 0, code, errs)
	assert.Equal(t, "list_dir said: . is empty\n", out)

	code, _, errs = c.run("run", "-a", "ghost", "-m", "hi")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, `no agent "ghost"`)
	code, _, errs = c.run("run", "--session", "nope", "-m", "hi")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, `no session nope: list them with "agnx-lite session list"`)

	var chatOut bytes.Buffer
	code, errs = c.runIn(strings.NewReader("hi\n/status\n"), &chatOut, "chat")
	require.Equal(t, 0, code, errs)
	assert.Regexp(t, `^agnx-lite chat · agent assistant \(ollama qwen3:1.7b\) · session \S+\necho: hi\nsession \S+ · agent assistant · active · 1 turns`, chatOut.String())
	id := regexp.MustCompile(`session (\S+)\n`).FindStringSubmatch(chatOut.String())[1]

	chatOut.Reset()
	code, errs = c.runIn(strings.NewReader("again\n"), &chatOut, "chat", "-C")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, chatOut.String(), "session "+id+"\necho: again\n", "-C continues the last CLI session")
	reqs := c.fake.Requests()
	assert.Equal(t, "hi", reqs[len(reqs)-1].Messages[1].Content, "the history went to the model")
}

// TestCLI_SameOutputBothWays runs the same commands in-process and
// through a daemon: the output is the same.
func TestCLI_SameOutputBothWays(t *testing.T) {
	outputs := map[bool]string{}
	for _, viaDaemon := range []bool{false, true} {
		c := newCLI(t)
		code, _, errs := c.run("init")
		require.Equal(t, 0, code, errs)
		if viaDaemon {
			c.serve()
		}
		var all strings.Builder
		for _, args := range [][]string{{"run", "-m", "one"}, {"run", "-m", "use list_dir {}"}} {
			code, out, errs := c.run(args...)
			require.Equal(t, 0, code, errs)
			all.WriteString(out + errs)
		}
		var chatOut bytes.Buffer
		code, errs = c.runIn(strings.NewReader("two\nuse list_dir {}\n/compact\n/help\n"), &chatOut, "chat", "-C")
		require.Equal(t, 0, code, errs)
		all.WriteString(chatOut.String() + errs)
		out := regexp.MustCompile(`\bsession_[0-9A-Z]{26}\b`).ReplaceAllString(all.String(), "ID")
		// Token estimates count call ids, which differ between the two.
		outputs[viaDaemon] = regexp.MustCompile(`about \d+ → \d+`).ReplaceAllString(out, "about N → N")
	}
	assert.Equal(t, outputs[false], outputs[true])
	assert.Contains(t, outputs[true], "list_dir said: . is empty")
	assert.Contains(t, outputs[true], "Summarised the older messages")
}

func TestCLI_Attach(t *testing.T) {
	outputs := map[bool]string{}
	for _, viaDaemon := range []bool{false, true} {
		c := newCLI(t)
		code, _, errs := c.run("run", "-m", "first")
		require.Equal(t, 0, code, errs)
		if viaDaemon {
			c.serve()
		}
		code, list, errs := c.run("attach", "--list")
		require.Equal(t, 0, code, errs)
		assert.Contains(t, list, "first")

		in, typing := io.Pipe()
		out := newSyncBuffer()
		exited := make(chan int, 1)
		go func() {
			code, errs := c.runIn(in, out, "attach")
			assert.Empty(t, errs)
			exited <- code
		}()
		out.waitFor(t, "-- live")
		_, err := io.WriteString(typing, "second\n")
		require.NoError(t, err)
		out.waitFor(t, "assistant> echo: second\n")
		require.NoError(t, typing.Close()) // Ctrl-D
		require.Equal(t, 0, <-exited)
		outputs[viaDaemon] = regexp.MustCompile(`\bsession_[0-9A-Z]{26}\b`).ReplaceAllString(out.String(), "ID")
	}
	assert.Equal(t, outputs[false], outputs[true])
	assert.Equal(t, "attached to session ID · agent assistant · active\n"+
		"you> first\nassistant> echo: first\n"+
		"-- live: type a message to send it · Ctrl-C stops a reply · Ctrl-D or /quit detaches\n"+
		"you> second\nassistant> echo: second\n"+
		"detached; the session goes on: agnx-lite attach ID\n", outputs[true])
}

func TestCLI_ServeClient(t *testing.T) {
	c := newCLI(t)
	code, _, errs := c.run("serve", "status")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "no agnx-lite daemon is running for "+c.dir)

	d := c.serve()
	code, out, errs := c.run("serve", "status")
	require.Equal(t, 0, code, errs)
	assert.Regexp(t, `pid +\d+\nurl +`+regexp.QuoteMeta(d.url)+`\nversion +test\nuptime +\d+s\nsessions +\d+ resident\nturns +0 running, 0 waiting\n`, out)

	code, out, errs = c.run("serve", "reload-agents")
	require.Equal(t, 0, code, errs)
	assert.Equal(t, "ok    assistant\n", out, "every agent of the folder, loaded or not")
	code, _, errs = c.run("run", "-m", "load it")
	require.Equal(t, 0, code, errs)
	code, out, errs = c.run("serve", "reload-agents")
	require.Equal(t, 0, code, errs)
	assert.Equal(t, "ok    assistant\n", out)

	code, _, errs = c.run("run", "-s", "127.0.0.1:"+"1", "-m", "hi")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "no agnx-lite daemon answers at http://127.0.0.1:1")

	code, out, errs = c.run("serve", "stop")
	require.Equal(t, 0, code, errs)
	assert.Equal(t, "stopped\n", out)
	<-d.finished
	require.NoError(t, d.err, "the daemon returned")
	_, err := os.Stat(c.dir + "/serve.json")
	assert.ErrorIs(t, err, os.ErrNotExist)

	code, _, errs = c.run("serve", "status")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "no agnx-lite daemon is running")
	code, out, errs = c.run("run", "-m", "in-process again")
	require.Equal(t, 0, code, errs)
	assert.Equal(t, "echo: in-process again\n", out)
}

// TestBackend_InterruptCancels is Ctrl-C during a turn, in both modes:
// the turn is cancelled and the printer says so.
func TestBackend_InterruptCancels(t *testing.T) {
	for _, viaDaemon := range []bool{false, true} {
		c := newCLIHandler(t, func(llmtest.RecordedRequest) llmtest.Reply {
			return llmtest.Reply{Text: "a long answer", Fault: llmtest.Stall, FaultAfter: 1}
		})
		code, _, errs := c.run("init")
		require.Equal(t, 0, code, errs)
		if viaDaemon {
			c.serve()
		}
		var errb bytes.Buffer
		g := &globals{dataDir: c.dir, config: c.cfg, stdout: io.Discard, stderr: &errb}
		b, cfg, err := openBackend(g, "")
		require.NoError(t, err)
		_, isHTTP := b.(*httpBackend)
		require.Equal(t, viaDaemon, isHTTP)
		s, err := startSession(b, cfg, "", "")
		require.NoError(t, err)
		out := newSyncBuffer()
		p := &turnPrinter{out: out, errw: out}
		interrupt := make(chan os.Signal, 1)
		done := make(chan outcome, 1)
		go func() {
			o, err := b.turn(context.Background(), s.ID, "talk", p, interrupt)
			assert.NoError(t, err)
			done <- o
		}()
		out.waitFor(t, "a ")
		interrupt <- os.Interrupt
		assert.Equal(t, runtime.TurnCancelled, (<-done).reason)
		assert.Equal(t, "a \n(cancelled)\n", out.String())
		require.NoError(t, b.close())
	}
}

// With the daemon holding the database, the session commands go through it.
func TestCLI_SessionsThroughTheDaemon(t *testing.T) {
	c := newCLI(t)
	c.serve()
	code, _, errs := c.run("run", "-m", "remember the milk")
	require.Equal(t, 0, code, errs)

	code, out, errs := c.run("session", "list")
	require.Equal(t, 0, code, errs)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 2)
	id := strings.Fields(lines[1])[0]

	code, out, errs = c.run("session", "show", id)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "you> remember the milk\nassistant> echo: remember the milk")

	code, out, errs = c.run("session", "export", id)
	require.Equal(t, 0, code, errs)
	jsonl := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, jsonl, 3, "Agnx's lines: agnx-lite's turn_end is left out")
	assert.Contains(t, jsonl[0], `"type":"session_start"`)

	code, out, errs = c.run("session", "end", id)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "ended session "+id)
	code, _, errs = c.run("run", "--session", id, "-m", "are you there?")
	assert.Equal(t, 1, code, "an ended session takes no more messages")
	assert.Contains(t, errs, "ended")

	code, out, errs = c.run("session", "delete", id)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "deleted session "+id)
	code, _, errs = c.run("session", "show", id)
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "no session "+id)
}
