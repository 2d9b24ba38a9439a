package jobstore

import (
	"cmp"
	"container/heap"
	"time"
)

// nextQueue holds a view's queued jobs in the order StartNext starts them,
// so that a take finds the best one in O(log n) of the queued jobs instead
// of reading or sorting them all: by kind, the jobs due (ready: highest
// priority, then earliest submitted_at, then smallest ID first) and the
// jobs not yet due (delayed: soonest due first). An entry is in it while
// it is queued (stateQueued) and no call of this process is starting it.
type nextQueue struct {
	ready   map[string]*entryHeap
	delayed map[string]*entryHeap
	in      map[*nextEntry]*entryHeap // the heap that holds each entry
}

// startsBefore is StartNext's order among due jobs.
func startsBefore(a, b *nextEntry) bool {
	if c := cmp.Compare(b.priority, a.priority); c != 0 {
		return c < 0 // higher first
	}
	if c := a.submittedAt.Compare(b.submittedAt); c != 0 {
		return c < 0
	}
	return a.name < b.name
}

// dueBefore orders the jobs not yet due: the soonest due first.
func dueBefore(a, b *nextEntry) bool {
	if c := a.due.Compare(b.due); c != 0 {
		return c < 0
	}
	return startsBefore(a, b)
}

// put adds e, which it does not hold: among the delayed jobs if it has a
// due time (promote moves it once due), else among the ready ones.
func (q *nextQueue) put(e *nextEntry) {
	h := heapOf(&q.delayed, e.kind, dueBefore)
	if e.due.IsZero() {
		h = heapOf(&q.ready, e.kind, startsBefore)
	}
	q.push(h, e)
}

// push adds e to h.
func (q *nextQueue) push(h *entryHeap, e *nextEntry) {
	if q.in == nil {
		q.in = map[*nextEntry]*entryHeap{}
	}
	q.in[e] = h
	heap.Push(h, e)
}

// remove takes e out, if q holds it.
func (q *nextQueue) remove(e *nextEntry) {
	if h := q.in[e]; h != nil {
		heap.Remove(h, h.at[e])
		delete(q.in, e)
	}
}

// best promotes the jobs of kinds (empty: every kind) due by wall and
// returns the one to start first, or nil.
func (q *nextQueue) best(kinds []string, wall time.Time) *nextEntry {
	var best *nextEntry
	q.each(kinds, q.delayed, func(kind string, h *entryHeap) {
		for h.Len() > 0 && !h.es[0].due.After(wall) {
			q.push(heapOf(&q.ready, kind, startsBefore), heap.Pop(h).(*nextEntry))
		}
	})
	q.each(kinds, q.ready, func(_ string, h *entryHeap) {
		if h.Len() > 0 && (best == nil || startsBefore(h.es[0], best)) {
			best = h.es[0]
		}
	})
	return best
}

// wake is when the soonest delayed job of kinds is due (zero: none).
func (q *nextQueue) wake(kinds []string) time.Time {
	var at time.Time
	q.each(kinds, q.delayed, func(_ string, h *entryHeap) {
		if h.Len() > 0 && (at.IsZero() || h.es[0].due.Before(at)) {
			at = h.es[0].due
		}
	})
	return at
}

// each calls f with the heap of each of kinds in m (every heap of m when
// kinds is empty), each kind once.
func (q *nextQueue) each(kinds []string, m map[string]*entryHeap, f func(kind string, h *entryHeap)) {
	if len(kinds) == 0 {
		for k, h := range m {
			f(k, h)
		}
		return
	}
	for i, k := range kinds {
		if h := m[k]; h != nil && !containsBefore(kinds, i) {
			f(k, h)
		}
	}
}

// containsBefore reports whether kinds[i] occurs before i.
func containsBefore(kinds []string, i int) bool {
	for _, k := range kinds[:i] {
		if k == kinds[i] {
			return true
		}
	}
	return false
}

// heapOf returns the heap of kind in *m, made with before if missing.
func heapOf(m *map[string]*entryHeap, kind string, before func(a, b *nextEntry) bool) *entryHeap {
	if *m == nil {
		*m = map[string]*entryHeap{}
	}
	h := (*m)[kind]
	if h == nil {
		h = &entryHeap{before: before, at: map[*nextEntry]int{}}
		(*m)[kind] = h
	}
	return h
}

// entryHeap is a binary heap of entries (container/heap) that keeps each
// entry's place in it, so that one can be removed in O(log n).
type entryHeap struct {
	es     []*nextEntry
	at     map[*nextEntry]int
	before func(a, b *nextEntry) bool
}

func (h *entryHeap) Len() int           { return len(h.es) }
func (h *entryHeap) Less(i, j int) bool { return h.before(h.es[i], h.es[j]) }

func (h *entryHeap) Swap(i, j int) {
	h.es[i], h.es[j] = h.es[j], h.es[i]
	h.at[h.es[i]], h.at[h.es[j]] = i, j
}

func (h *entryHeap) Push(x any) {
	e := x.(*nextEntry)
	h.at[e] = len(h.es)
	h.es = append(h.es, e)
}

func (h *entryHeap) Pop() any {
	n := len(h.es) - 1
	e := h.es[n]
	h.es[n] = nil
	h.es = h.es[:n]
	delete(h.at, e)
	return e
}
