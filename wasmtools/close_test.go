package wasmtools

import (
	"context"
	goruntime "runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// holdStart is a function listener that stops a call as its _start
// begins: it says so on running and goes on once proceed is closed.
type holdStart struct {
	running chan struct{}
	proceed chan struct{}
}

func (h *holdStart) NewFunctionListener(def api.FunctionDefinition) experimental.FunctionListener {
	if !strings.Contains(strings.Join(def.ExportNames(), ","), "_start") {
		return nil
	}
	return h
}

func (h *holdStart) Before(context.Context, api.Module, api.FunctionDefinition, []uint64, experimental.StackIterator) {
	h.running <- struct{}{}
	<-h.proceed
}

func (h *holdStart) After(context.Context, api.Module, api.FunctionDefinition, []uint64) {}

func (h *holdStart) Abort(context.Context, api.Module, api.FunctionDefinition, error) {}

// A tool closed while a call runs (its agent evicted or reloaded) lets
// that call finish with its result; only the calls after fail, with
// ErrClosed.
func TestTool_CloseUnderARunningCall(t *testing.T) {
	for _, mode := range []string{ModeCompiler, ModeInterpreter} {
		t.Run(mode, func(t *testing.T) {
			if mode == ModeCompiler && !compilerSupported() {
				t.Skip("no compiler on " + goruntime.GOARCH)
			}
			e, err := New(Options{Mode: mode})
			require.NoError(t, err)
			defer e.Close(context.Background())
			hold := &holdStart{running: make(chan struct{}, 1), proceed: make(chan struct{})}
			ctx := experimental.WithFunctionListenerFactory(context.Background(), hold)
			tool, err := e.Load(ctx, toolDir(t, "name: ok\ndescription: says ok\n", okWasm()), ToolOptions{})
			require.NoError(t, err)

			type answer struct {
				res runtime.Result
				err error
			}
			done := make(chan answer, 1)
			go func() {
				res, err := tool.Run(context.Background(), nil)
				done <- answer{res, err}
			}()
			<-hold.running
			require.NoError(t, tool.Close(context.Background()))
			close(hold.proceed)
			a := <-done
			require.NoError(t, a.err, "the call running when the tool closed finishes")
			assert.False(t, a.res.IsError)
			assert.Equal(t, "ok", strings.TrimSpace(a.res.Content))

			_, err = tool.Run(context.Background(), nil)
			assert.ErrorIs(t, err, ErrClosed, "a call after the close does not run")
		})
	}
}
