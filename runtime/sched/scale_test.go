package sched

import (
	"fmt"
	goruntime "runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/storage"
)

// putMany writes n active schedules straight into the store, due at next,
// each of an agent of its own (one agent's runs are spaced MinRunGap
// apart).
func putMany(t *testing.T, st *storage.Store, n int, next time.Time) {
	t.Helper()
	require.NoError(t, st.Update(func(tx *storage.Tx) error {
		for i := range n {
			sc := message(Timing{EverySeconds: 24 * 3600, Anchor: next.Add(-24 * time.Hour)})
			sc.ID, sc.Status, sc.Next = fmt.Sprintf("sched_%04d", i), Active, next
			sc.Agent = fmt.Sprintf("a%04d", i)
			b, err := encodeSchedule(&sc)
			if err == nil {
				err = putSchedule(tx, sc.ID, b)
			}
			if err != nil {
				return err
			}
		}
		return nil
	}))
}

func heapAlloc() uint64 {
	goruntime.GC()
	goruntime.GC()
	var m goruntime.MemStats
	goruntime.ReadMemStats(&m)
	return m.HeapAlloc
}

// A thousand waiting schedules cost no goroutine and a few tens of bytes
// each; firing them all at once runs at most Workers goroutines more.
func TestService_ThousandSchedules(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n = 1000
		h := newHarness(t, time.UTC)
		h.start()
		goroutines, before := goruntime.NumGoroutine(), heapAlloc()

		putMany(t, h.st, n, time.Now().Add(24*time.Hour))
		h.restart()
		active, next := h.s.Stats()
		require.Equal(t, n, active)
		assert.True(t, next.Equal(time.Now().Add(24*time.Hour)))
		after := heapAlloc()
		assert.Equal(t, goroutines, goruntime.NumGoroutine(), "waiting schedules cost no goroutines")
		grown := int64(after) - int64(before)
		t.Logf("%d waiting schedules: %d goroutines, heap %+d bytes (%d per schedule)", n, goruntime.NumGoroutine(), grown, grown/n)
		assert.Less(t, grown, int64(256<<10))

		var (
			mu   sync.Mutex
			most int
		)
		h.firer.setBefore(func(Firing) error {
			mu.Lock()
			most = max(most, goruntime.NumGoroutine())
			mu.Unlock()
			return nil
		})
		sleep(24 * time.Hour)
		assert.Len(t, h.firer.runs(), n)
		h.firer.mu.Lock()
		peak := h.firer.peak
		h.firer.mu.Unlock()
		t.Logf("firing %d at once: at most %d firings, %d goroutines", n, peak, most)
		assert.LessOrEqual(t, peak, h.s.workers)
		assert.Equal(t, goroutines, goruntime.NumGoroutine())
	})
}

// BenchmarkService_Load measures loading and arming a thousand schedules
// (what Run does at start) and reports the heap they keep.
func BenchmarkService_Load(b *testing.B) {
	st, err := storage.Open(b.TempDir()+"/agnx.db", &storage.Options{NoSync: true})
	require.NoError(b, err)
	b.Cleanup(func() { _ = st.Close() })
	require.NoError(b, st.Update(func(tx *storage.Tx) error {
		for i := range 1000 {
			sc := message(Timing{EverySeconds: 3600, Anchor: time.Unix(0, 0)})
			sc.ID, sc.Status, sc.Next = fmt.Sprintf("sched_%04d", i), Active, time.Unix(int64(i), 0)
			bs, err := encodeSchedule(&sc)
			if err == nil {
				err = putSchedule(tx, sc.ID, bs)
			}
			if err != nil {
				return err
			}
		}
		return nil
	}))
	before := heapAlloc()
	kept := New(Options{DB: FromStore(st)})
	require.NoError(b, kept.loadAll())
	grown := heapAlloc() - before
	require.Equal(b, 1000, kept.heap.Len())

	b.ReportAllocs()
	for b.Loop() {
		s := New(Options{DB: FromStore(st)})
		require.NoError(b, s.loadAll())
	}
	b.ReportMetric(float64(grown), "heap-B/1000-schedules")
}
