package runtime_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
	"github.com/agnx-lite/agnx-lite/storage"
)

func TestLoop_Commit(t *testing.T) {
	h := newHarness(t, llmtest.Echo())
	ctx := context.Background()
	put := func(tx *storage.Tx) error { return tx.IndexPut("mem/assistant", "meta", []byte("n"), []byte("1")) }
	require.NoError(t, h.loop.Commit(ctx, put))
	get := func() []byte {
		var v []byte
		require.NoError(t, h.loop.View(func(tx *storage.Tx) (err error) {
			v, err = tx.IndexGet("mem/assistant", "meta", []byte("n"))
			return err
		}))
		return v
	}
	assert.Equal(t, "1", string(get()), "durable and visible when Commit returns")

	// A failing fn fails its batch and says so; nothing of it is kept.
	boom := errors.New("boom")
	err := h.loop.Commit(ctx, func(tx *storage.Tx) error {
		if err := tx.IndexPut("mem/assistant", "meta", []byte("n"), []byte("2")); err != nil {
			return err
		}
		return boom
	})
	require.ErrorIs(t, err, boom)
	assert.Equal(t, "1", string(get()))

	// The loop goes on serving.
	info, err := h.loop.CreateSession(ctx, runtime.NewSession{Agent: "assistant"})
	require.NoError(t, err)
	assert.NotEmpty(t, info.ID)

	h.restart()
	assert.Equal(t, "1", string(get()), "kept across a restart")
}

// SessionIDs lists every session without reading their records, and
// SessionAgent knows the agent of those the loop created or loaded, not
// of the others, and forgets a deleted one.
func TestLoop_SessionIDsAndAgents(t *testing.T) {
	h := newHarness(t, llmtest.Echo())
	ctx := context.Background()
	a, b := h.session(), h.session()
	ids, err := h.loop.SessionIDs(ctx)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{a, b}, ids)
	agent, ok := h.loop.SessionAgent(a)
	require.True(t, ok)
	assert.Equal(t, "assistant", agent)

	h.restart()
	_, ok = h.loop.SessionAgent(a)
	assert.False(t, ok, "a new loop has not seen it")
	h.turn(a, "hi") // loads it
	agent, ok = h.loop.SessionAgent(a)
	assert.True(t, ok)
	assert.Equal(t, "assistant", agent)

	require.NoError(t, h.loop.DeleteSession(ctx, a))
	_, ok = h.loop.SessionAgent(a)
	assert.False(t, ok)
	ids, err = h.loop.SessionIDs(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{b}, ids)
}
