package workers

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
)

// A worker's progress reaches the parent at most every progressEvery:
// the first line at once, then the latest of those in between.
func TestProgress_Coalesces(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sent []string
		p := &progress{ctx: context.Background(), send: func(_ context.Context, s string) { sent = append(sent, s) }}
		p.say("one")
		p.say("two")
		p.say("three")
		assert.Equal(t, []string{"one"}, sent)
		time.Sleep(progressEvery)
		p.say("four")
		assert.Equal(t, []string{"one", "four"}, sent, "three was replaced before its turn came")
		p.say("five")
		p.flush()
		p.flush()
		assert.Equal(t, []string{"one", "four", "five"}, sent, "the last line goes out at the end")
		p.say("")
		time.Sleep(progressEvery)
		p.say(strings.Repeat("x", 500))
		assert.Len(t, sent, 4)
		assert.LessOrEqual(t, len(sent[3]), maxProgressLine+len("…"))
	})
}
