package sched

import (
	"cmp"
	"container/heap"
	"sort"
	"time"
)

// due is one heap entry: when schedule id of agent runs next (Unix
// nanoseconds). It is all Run keeps of a waiting schedule. since is set
// while the run is held back for its agent's spacing (MinRunGap): when it
// was first found due, so that the hold is not taken for a downtime.
type due struct {
	next  int64
	since int64
	id    string
	agent string
}

// dueHeap is a min-heap of due entries by next, with each id's position
// so that an entry can be replaced or removed in O(log n).
type dueHeap struct {
	items []due
	pos   map[string]int
}

// Len, Less, Swap, Push and Pop are container/heap's interface.
func (h *dueHeap) Len() int { return len(h.items) }
func (h *dueHeap) Less(i, j int) bool {
	if h.items[i].next != h.items[j].next {
		return h.items[i].next < h.items[j].next
	}
	return h.items[i].id < h.items[j].id
}

func (h *dueHeap) Swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	h.pos[h.items[i].id] = i
	h.pos[h.items[j].id] = j
}

func (h *dueHeap) Push(x any) {
	e := x.(due)
	h.pos[e.id] = len(h.items)
	h.items = append(h.items, e)
}

func (h *dueHeap) Pop() any {
	n := len(h.items) - 1
	e := h.items[n]
	h.items[n] = due{}
	h.items = h.items[:n]
	delete(h.pos, e.id)
	return e
}

// set arms id (agent's) at next, replacing its entry if it has one.
func (h *dueHeap) set(id, agent string, next time.Time) {
	if i, ok := h.pos[id]; ok {
		h.items[i] = due{next: next.UnixNano(), id: id, agent: agent}
		heap.Fix(h, i)
		return
	}
	heap.Push(h, due{next: next.UnixNano(), id: id, agent: agent})
}

// hold moves the first entry, due at now, to until, remembering when it
// was first held; it reports whether this is its first hold.
func (h *dueHeap) hold(until, now int64) bool {
	e := &h.items[0]
	first := e.since == 0
	if first {
		e.since = now
	}
	e.next = until
	heap.Fix(h, 0)
	return first
}

// remove disarms id, if it is armed.
func (h *dueHeap) remove(id string) {
	if i, ok := h.pos[id]; ok {
		heap.Remove(h, i)
	}
}

// reset empties the heap and lets its memory go.
func (h *dueHeap) reset() {
	h.items = nil
	h.pos = map[string]int{}
}

// sortByNext orders schedules by their next run, those without one
// last, then by id.
func sortByNext(scs []Schedule) {
	// The order is total (ids are unique), so an unstable sort does; and
	// sort.Slice, not slices.SortFunc: a generic sort of a struct type
	// costs the binary a copy of the sort for its shape.
	sort.Slice(scs, func(i, j int) bool { return scheduleOrder(&scs[i], &scs[j]) < 0 })
}

// scheduleOrder compares two schedules for sortByNext.
func scheduleOrder(a, b *Schedule) int {
	switch {
	case a.Next.IsZero() != b.Next.IsZero():
		if a.Next.IsZero() {
			return 1
		}
		return -1
	case !a.Next.Equal(b.Next):
		return a.Next.Compare(b.Next)
	}
	return cmp.Compare(a.ID, b.ID)
}
