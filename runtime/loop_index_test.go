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
