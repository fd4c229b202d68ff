package runtime_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
	"github.com/agnx-lite/agnx-lite/storage"
	"github.com/agnx-lite/agnx-lite/storage/storagetest"
)

// A page damaged while the daemon runs: bbolt panics on it when a session
// is loaded; the loop stops with the damaged-database error instead of
// crashing, and every later call gets that error.
func TestLoop_DamagedPageStopsTheLoop(t *testing.T) {
	h := newHarness(t, llmtest.Echo())
	sid := h.session()
	h.turn(sid, "hello")
	h.close()
	path := filepath.Join(h.dir, "agnx.db")
	off, n := storagetest.SessionsPage(t, path)
	h.start()
	storagetest.Overwrite(t, path, off, n) // under the open store's map

	_, err := h.loop.Send(context.Background(), sid, runtime.Input{Content: "still there?"})
	require.ErrorIs(t, err, storage.ErrCorrupt)
	assert.Contains(t, err.Error(), "the database "+path+" is damaged")
	assert.ErrorIs(t, <-h.exited, storage.ErrCorrupt, "Run returns why it stopped")
	_, err = h.loop.CreateSession(context.Background(), runtime.NewSession{Agent: "assistant"})
	assert.ErrorIs(t, err, storage.ErrCorrupt, "later calls say why, not 'shutting down'")
	require.NoError(t, h.store.Close())
	h.store = nil
}
