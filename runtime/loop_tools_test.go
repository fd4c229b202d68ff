package runtime

import (
	"context"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
)

// stuckTool ignores its context, as a read blocked opening a FIFO would,
// until released.
type stuckTool struct {
	release  chan struct{}
	deadline time.Duration
}

func (s *stuckTool) Spec() ToolSpec                { return ToolSpec{Name: "stuck"} }
func (s *stuckTool) Deadline([]byte) time.Duration { return s.deadline }
func (s *stuckTool) Run(context.Context, []byte) (Result, error) {
	<-s.release
	return Result{Content: "late"}, nil
}

func TestLoop_CallToolGivesUpOnAStuckTool(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := &Loop{log: slog.New(slog.DiscardHandler)}
		tool := &stuckTool{release: make(chan struct{}), deadline: time.Minute}
		start := time.Now()
		res := l.callTool(context.Background(), ToolCall{Name: "stuck"}, tool)
		assert.True(t, res.IsError)
		assert.Contains(t, res.Content, "the tool did not stop in time")
		assert.Equal(t, time.Minute+maxToolGrace, time.Since(start), "its deadline, then the grace")
		assert.EqualValues(t, 1, l.StuckTools())

		close(tool.release) // the blocked open returns at last
		synctest.Wait()
		assert.Zero(t, l.StuckTools())
	})
}

func TestLoop_CallToolCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := &Loop{log: slog.New(slog.DiscardHandler)}
		tool := &stuckTool{release: make(chan struct{}), deadline: time.Hour}
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(time.Second, cancel) // the user cancels the turn
		start := time.Now()
		res := l.callTool(ctx, ToolCall{Name: "stuck"}, tool)
		assert.Contains(t, res.Content, "the tool did not stop in time")
		assert.Equal(t, time.Second+maxToolGrace, time.Since(start), "a cancelled call is let go after the grace")
		close(tool.release)
		synctest.Wait()
		assert.Zero(t, l.StuckTools())
	})
}

// ctxTool honours its context.
type ctxTool struct{}

func (ctxTool) Spec() ToolSpec { return ToolSpec{Name: "read_file"} }
func (ctxTool) Run(ctx context.Context, _ []byte) (Result, error) {
	<-ctx.Done()
	return Result{}, context.Cause(ctx)
}

func TestLoop_CallToolDeadlines(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := &Loop{log: slog.New(slog.DiscardHandler)}
		start := time.Now()
		res := l.callTool(context.Background(), ToolCall{Name: "read_file"}, ctxTool{})
		assert.Equal(t, builtinToolDeadline, time.Since(start), "a built-in without a deadline of its own gets one")
		assert.Equal(t, "error: context deadline exceeded", res.Content)
		assert.Zero(t, l.StuckTools())
	})
}
