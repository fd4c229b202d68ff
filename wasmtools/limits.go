package wasmtools

import (
	"sync/atomic"

	"github.com/tetratelabs/wazero/experimental"
)

const (
	pageSize   = 64 << 10
	pagesPerMB = (1 << 20) / pageSize
)

// memLimit is the memory allocator of one call: it backs the instance's
// linear memory with a Go slice and refuses to grow it past limit bytes,
// so memory.grow returns -1 and the guest fails with its own out-of-memory
// error. It is how one shared runtime gives each tool its own memory_mb.
type memLimit struct {
	limit  uint64
	denied atomic.Bool
}

var _ experimental.MemoryAllocator = (*memLimit)(nil)

// Allocate ignores the capacity hint: memory grows on demand, so a module
// asking for little costs little.
func (m *memLimit) Allocate(_, _ uint64) experimental.LinearMemory {
	return &linearMemory{owner: m}
}

type linearMemory struct {
	owner *memLimit
	buf   []byte
}

// Reallocate grows the memory to size bytes, doubling the backing array
// (up to the limit) so that repeated small grows stay cheap. wazero never
// shrinks a memory, and the bytes past len are zero (fresh from make).
func (l *linearMemory) Reallocate(size uint64) []byte {
	// The initial size is checked at Load, so only growth can be refused
	// here; wazero panics if the initial allocation returns nil.
	if size > l.owner.limit && l.buf != nil {
		l.owner.denied.Store(true)
		return nil
	}
	if size <= uint64(cap(l.buf)) {
		l.buf = l.buf[:size]
		return l.buf
	}
	capacity := max(size, min(2*uint64(cap(l.buf)), l.owner.limit))
	buf := make([]byte, size, capacity)
	copy(buf, l.buf)
	l.buf = buf
	return buf
}

func (l *linearMemory) Free() { l.buf = nil }

// capWriter keeps the first limit bytes written to it and counts the rest,
// which it discards: a tool writing without end costs no memory.
type capWriter struct {
	limit int
	buf   []byte
	cut   int64
}

func (w *capWriter) Write(p []byte) (int, error) {
	n := min(max(w.limit-len(w.buf), 0), len(p))
	w.buf = append(w.buf, p[:n]...)
	w.cut += int64(len(p) - n)
	return len(p), nil
}

// tailWriter keeps the last limit bytes written to it: the end of stderr
// is where a failure explains itself.
type tailWriter struct {
	limit   int
	buf     []byte
	dropped int64
}

func (w *tailWriter) Write(p []byte) (int, error) {
	if len(p) >= w.limit {
		w.dropped += int64(len(w.buf) + len(p) - w.limit)
		w.buf = append(w.buf[:0], p[len(p)-w.limit:]...)
		return len(p), nil
	}
	w.buf = append(w.buf, p...)
	if len(w.buf) > 2*w.limit {
		drop := len(w.buf) - w.limit
		w.dropped += int64(drop)
		w.buf = append(w.buf[:0], w.buf[drop:]...)
	}
	return len(p), nil
}

// String is the kept tail, marked when earlier bytes were dropped.
func (w *tailWriter) String() string {
	b := w.buf
	if len(b) > w.limit {
		w.dropped += int64(len(b) - w.limit)
		b = b[len(b)-w.limit:]
		w.buf = b
	}
	if w.dropped > 0 {
		return "[...]" + string(b)
	}
	return string(b)
}
