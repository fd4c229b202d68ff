package runtime_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/storage"
)

// logStore is a store holding session "s" with n user messages as events
// 1..n, without a loop.
func logStore(t testing.TB, n int) *storage.Store {
	t.Helper()
	st, err := storage.Open(filepath.Join(t.TempDir(), "agnx.db"), &storage.Options{NoSync: true})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	require.NoError(t, st.Update(func(tx *storage.Tx) error {
		if err := tx.CreateSession("s", []byte(`{}`)); err != nil {
			return err
		}
		for seq := uint64(1); seq <= uint64(n); seq++ {
			if err := tx.AppendEvent("s", seq, logEvent(seq)); err != nil {
				return err
			}
		}
		return nil
	}))
	return st
}

func logEvent(seq uint64) []byte {
	e := runtime.Event{Seq: seq, Type: runtime.EvUserMessage, Content: fmt.Sprintf("message %d", seq),
		Time: time.Unix(1700000000+int64(seq), 0)}
	return e.AppendJSON(nil)
}

// putCheckpoint writes a hand-made checkpoint at seq; window 0 leaves
// window_seq out, as a checkpoint from before windows.
func putCheckpoint(t testing.TB, st *storage.Store, seq, window uint64) {
	t.Helper()
	cp := `{"v":1}`
	if window > 0 {
		cp = fmt.Sprintf(`{"v":2,"window_seq":%d}`, window)
	}
	require.NoError(t, st.Update(func(tx *storage.Tx) error { return tx.PutCheckpoint("s", seq, []byte(cp)) }))
}

// seqs reads the whole log as ReadEvents gives it.
func seqs(t testing.TB, st *storage.Store) []uint64 {
	t.Helper()
	var out []uint64
	require.NoError(t, runtime.ReadEvents(st, "s", 0, func(e runtime.Event) error {
		out = append(out, e.Seq)
		return nil
	}))
	return out
}

func upTo(n uint64) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		out[i] = uint64(i) + 1
	}
	return out
}

func firstSeq(t testing.TB, st *storage.Store) uint64 {
	var first uint64
	require.NoError(t, st.View(func(tx *storage.Tx) (err error) { first, err = tx.FirstSeq("s"); return }))
	return first
}

func archivePath(st *storage.Store) string {
	return filepath.Join(runtime.ArchiveDir(st), "s.jsonl.gz")
}

func TestPruneFloor(t *testing.T) {
	st := logStore(t, 30)
	floor, err := runtime.PruneFloor(st, "s")
	require.NoError(t, err)
	assert.Zero(t, floor, "no checkpoint: replayed from 1")

	putCheckpoint(t, st, 10, 0)
	floor, err = runtime.PruneFloor(st, "s")
	require.NoError(t, err)
	assert.Zero(t, floor, "a legacy checkpoint carries no window_seq")

	putCheckpoint(t, st, 20, 15)
	floor, err = runtime.PruneFloor(st, "s")
	require.NoError(t, err)
	assert.Equal(t, uint64(14), floor, "below the window start")

	putCheckpoint(t, st, 25, 28)
	floor, err = runtime.PruneFloor(st, "s")
	require.NoError(t, err)
	assert.Equal(t, uint64(25), floor, "never past the checkpoint")

	_, err = runtime.PruneFloor(st, "nope")
	assert.ErrorIs(t, err, runtime.ErrSessionNotFound)
}

func TestRetain_Modes(t *testing.T) {
	t.Run("discard", func(t *testing.T) {
		st := logStore(t, 30)
		putCheckpoint(t, st, 20, 15)
		r, err := runtime.Retain(st, "s", runtime.RetainOptions{Mode: runtime.CompactionDiscard})
		require.NoError(t, err)
		assert.Equal(t, runtime.Retained{Pruned: 14}, r)
		assert.Equal(t, uint64(15), firstSeq(t, st))
		assert.Equal(t, upTo(30)[14:], seqs(t, st))
		assert.NoFileExists(t, archivePath(st))
	})
	t.Run("archive", func(t *testing.T) {
		st := logStore(t, 30)
		putCheckpoint(t, st, 20, 15)
		r, err := runtime.Retain(st, "s", runtime.RetainOptions{Mode: runtime.CompactionArchive})
		require.NoError(t, err)
		assert.Equal(t, runtime.Retained{Pruned: 14, Archived: 14}, r)
		assert.Equal(t, uint64(15), firstSeq(t, st))
		assert.Equal(t, upTo(30), seqs(t, st), "the archive first, then the stored events")
		fi, err := os.Stat(archivePath(st))
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
		di, err := os.Stat(runtime.ArchiveDir(st))
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o700), di.Mode().Perm())

		putCheckpoint(t, st, 30, 31) // a later pass appends a second member, emptying the store

		r, err = runtime.Retain(st, "s", runtime.RetainOptions{Mode: runtime.CompactionArchive})
		require.NoError(t, err)
		assert.Equal(t, 16, r.Archived)
		assert.Zero(t, firstSeq(t, st))
		assert.Equal(t, upTo(30), seqs(t, st))
		var after []uint64
		require.NoError(t, runtime.ReadEvents(st, "s", 12, func(e runtime.Event) error { after = append(after, e.Seq); return nil }))
		assert.Equal(t, upTo(30)[12:], after, "a read from the middle of the archive")
	})
	t.Run("disabled", func(t *testing.T) {
		st := logStore(t, 30)
		putCheckpoint(t, st, 20, 15)
		for _, mode := range []string{runtime.CompactionDisabled, ""} {
			r, err := runtime.Retain(st, "s", runtime.RetainOptions{Mode: mode})
			require.NoError(t, err)
			assert.Zero(t, r)
		}
		assert.Equal(t, uint64(1), firstSeq(t, st))
	})
	t.Run("legacy checkpoint", func(t *testing.T) {
		st := logStore(t, 30)
		putCheckpoint(t, st, 20, 0)
		r, err := runtime.Retain(st, "s", runtime.RetainOptions{Mode: runtime.CompactionDiscard})
		require.NoError(t, err)
		assert.Zero(t, r)
		assert.Equal(t, uint64(1), firstSeq(t, st))
	})
}

func TestRetain_Bounds(t *testing.T) {
	st := logStore(t, 100)
	putCheckpoint(t, st, 100, 91)
	o := runtime.RetainOptions{Mode: runtime.CompactionArchive, MaxEvents: 40}
	var passes []runtime.Retained
	for range 4 {
		r, err := runtime.Retain(st, "s", o)
		require.NoError(t, err)
		passes = append(passes, r)
	}
	assert.Equal(t, []runtime.Retained{{Pruned: 40, Archived: 40, More: true}, {Pruned: 40, Archived: 40, More: true},
		{Pruned: 10, Archived: 10}, {}}, passes)
	assert.Equal(t, uint64(91), firstSeq(t, st))
	assert.Equal(t, upTo(100), seqs(t, st))

	lim := runtime.RetainOptions{Mode: runtime.CompactionDiscard,
		Limit: func(*storage.Tx) (uint64, error) { return 5, nil }}
	st2 := logStore(t, 30)
	putCheckpoint(t, st2, 30, 20)
	r, err := runtime.Retain(st2, "s", lim)
	require.NoError(t, err)
	assert.Equal(t, 5, r.Pruned, "a memory index that read 5 events keeps the rest")
}

// TestRetain_CrashStates puts the archive in the states a crash leaves
// and checks that the next pass and the readers lose and repeat nothing.
func TestRetain_CrashStates(t *testing.T) {
	t.Run("between fsync and prune", func(t *testing.T) {
		st := logStore(t, 30)
		putCheckpoint(t, st, 20, 15)
		var lines [][]byte
		for seq := uint64(1); seq <= 14; seq++ {
			lines = append(lines, logEvent(seq))
		}
		_, err := runtime.AppendArchive(runtime.ArchiveDir(st), "s", 0, 1, 14, lines)
		require.NoError(t, err)
		assert.Equal(t, upTo(30), seqs(t, st), "archived twice over: each seq once")
		r, err := runtime.Retain(st, "s", runtime.RetainOptions{Mode: runtime.CompactionArchive})
		require.NoError(t, err)
		assert.Equal(t, 14, r.Pruned)
		assert.Equal(t, upTo(30), seqs(t, st))
		assertMembers(t, archivePath(st), 1) // the uncommitted copy was cut off
	})
	t.Run("mid append", func(t *testing.T) {
		st := logStore(t, 30)
		putCheckpoint(t, st, 10, 8)
		_, err := runtime.Retain(st, "s", runtime.RetainOptions{Mode: runtime.CompactionArchive})
		require.NoError(t, err)
		f, err := os.OpenFile(archivePath(st), os.O_APPEND|os.O_WRONLY, 0)
		require.NoError(t, err)
		half := gzipMember(t, logEvent(8), logEvent(9))
		_, err = f.Write(half[:len(half)/2])
		require.NoError(t, err)
		require.NoError(t, f.Close())
		assert.Equal(t, upTo(30), seqs(t, st), "readers stop where the last pass committed")

		putCheckpoint(t, st, 20, 15)
		r, err := runtime.Retain(st, "s", runtime.RetainOptions{Mode: runtime.CompactionArchive})
		require.NoError(t, err)
		assert.Equal(t, 7, r.Pruned)
		assert.Equal(t, upTo(30), seqs(t, st), "the torn member is gone, nothing else")
		assertMembers(t, archivePath(st), 2)
	})
}

func gzipMember(t testing.TB, lines ...[]byte) []byte {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	for _, l := range lines {
		_, err := zw.Write(append(l, '\n'))
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	return b.Bytes()
}

func assertMembers(t *testing.T, path string, want int) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	br := bufio.NewReader(bytes.NewReader(data))
	n := 0
	for {
		if _, err := br.Peek(1); err != nil {
			break
		}
		zr, err := gzip.NewReader(br)
		require.NoError(t, err)
		zr.Multistream(false)
		_, err = io.Copy(io.Discard, zr)
		require.NoError(t, err)
		n++
	}
	assert.Equal(t, want, n)
}

func TestReadEvents_DamagedArchive(t *testing.T) {
	st := logStore(t, 30)
	putCheckpoint(t, st, 20, 15)
	_, err := runtime.Retain(st, "s", runtime.RetainOptions{Mode: runtime.CompactionArchive})
	require.NoError(t, err)
	data, err := os.ReadFile(archivePath(st))
	require.NoError(t, err)
	data[len(data)-6] ^= 0xff // the member's CRC
	require.NoError(t, os.WriteFile(archivePath(st), data, 0o600))
	var got []uint64
	err = runtime.ReadEvents(st, "s", 0, func(e runtime.Event) error { got = append(got, e.Seq); return nil })
	var dmg *runtime.ArchiveDamagedError
	require.ErrorAs(t, err, &dmg)
	assert.Equal(t, archivePath(st), dmg.Path)
	assert.Contains(t, err.Error(), archivePath(st))
	assert.Equal(t, upTo(30)[14:], got[len(got)-16:], "the stored events still come")
}

func FuzzReadArchive(f *testing.F) {
	member := func(first, last uint64) []byte {
		var lines [][]byte
		for seq := first; seq <= last; seq++ {
			lines = append(lines, logEvent(seq))
		}
		b, err := runtime.EncodeMember(lines, first, last)
		require.NoError(f, err)
		return b
	}
	f.Add(append(member(1, 3), member(4, 6)...), uint64(4))
	f.Add(append(member(1, 3), member(4, 6)...), uint64(0))
	f.Add(gzipMember(f, logEvent(1), logEvent(2)), uint64(0))
	f.Add(append(gzipMember(f, logEvent(1)), gzipMember(f, []byte(`{"seq":2}`))...), uint64(2))
	f.Add(gzipMember(f, []byte("not json"), []byte("")), uint64(0))
	f.Add([]byte{0x1f, 0x8b, 8, 0}, uint64(0))
	f.Add([]byte{}, uint64(0))
	f.Fuzz(func(t *testing.T, data []byte, from uint64) {
		err := runtime.ReadArchiveBytes(data, from, func(line []byte) error {
			require.NotEmpty(t, line)
			return nil
		})
		if err != nil {
			var dmg *runtime.ArchiveDamagedError
			require.ErrorAs(t, err, &dmg)
		}
	})
}

// A reader from a later seq skips whole members without inflating them.
func TestReadArchive_SkipsMembers(t *testing.T) {
	var file []byte
	for first := uint64(1); first <= 30; first += 10 {
		var lines [][]byte
		for seq := first; seq < first+10; seq++ {
			lines = append(lines, logEvent(seq))
		}
		b, err := runtime.EncodeMember(lines, first, first+9)
		require.NoError(t, err)
		file = append(file, b...)
	}
	var got []string
	require.NoError(t, runtime.ReadArchiveBytes(file, 25, func(line []byte) error {
		got = append(got, string(line))
		return nil
	}))
	assert.Len(t, got, 10, "the first two members skipped, the third read whole")
	assert.Contains(t, got[0], `"seq":21`)
}

func TestLoop_EndSession(t *testing.T) {
	h := newHarness(t, nil)
	ctx := context.Background()
	sid := h.session()
	assert.Error(t, h.loop.EndSession(ctx, sid, "bored"))

	info, err := h.loop.Session(ctx, sid)
	require.NoError(t, err)
	ok, err := h.loop.ExpireSession(ctx, sid, info.Updated)
	require.NoError(t, err)
	assert.False(t, ok, "active at the idle mark: kept")

	ok, err = h.loop.ExpireSession(ctx, sid, info.Updated.Add(time.Millisecond))
	require.NoError(t, err)
	assert.True(t, ok)
	info, err = h.loop.Session(ctx, sid)
	require.NoError(t, err)
	assert.Equal(t, runtime.SessionCompleted, info.Status)
	ends := find(h.durable(sid), runtime.EvSessionEnd)
	require.Len(t, ends, 1)
	assert.Equal(t, runtime.EndTimeout, ends[0].Reason)
	_, err = h.loop.Send(ctx, sid, runtime.Input{Content: "hello?"})
	assert.ErrorIs(t, err, runtime.ErrSessionEnded)
	require.NoError(t, h.loop.EndSession(ctx, sid, runtime.EndCompleted), "ending an ended session does nothing")

	h.restart()
	info, err = h.loop.Session(ctx, sid)
	require.NoError(t, err)
	assert.Equal(t, runtime.SessionCompleted, info.Status)
	assert.ErrorIs(t, h.loop.EndSession(ctx, "nope", runtime.EndCompleted), runtime.ErrSessionNotFound)
}

func TestLoop_DeleteSessionRemovesArchive(t *testing.T) {
	h := newHarness(t, nil)
	ctx := context.Background()
	sid := h.session()
	_, err := runtime.AppendArchive(runtime.ArchiveDir(h.store), sid, 0, 1, 1, [][]byte{logEvent(1)})
	require.NoError(t, err)
	path := filepath.Join(runtime.ArchiveDir(h.store), sid+".jsonl.gz")
	require.FileExists(t, path)
	require.NoError(t, h.loop.DeleteSession(ctx, sid))
	assert.NoFileExists(t, path)
}
