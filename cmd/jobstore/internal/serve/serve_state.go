package serve

import (
	"context"
	"sync"
	"time"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/jobview"
	"github.com/axqua/jobstore/cmd/jobstore/internal/remedy"
	"github.com/axqua/jobstore/cmd/jobstore/internal/termtext"
)

// This file is what serve knows of the root: every job as WatchRoot last
// told it, kept in memory (the records are read by WatchRoot alone), the
// counters its changes feed (serve_metrics.go), and the events it
// publishes to the pages (serve_events.go).

// jobTable is the root's jobs as last learned from WatchRoot.
type jobTable struct {
	root    string
	hub     *eventHub
	metrics *serveMetrics

	mu      sync.RWMutex
	jobs    map[jobstore.JobDir]*jobview.WatchedJob
	synced  bool  // WatchRoot has delivered every job of its first look
	rootErr error // the root cannot be read now (nil: it can)
	dirty   bool  // counts changed since they were last published
	// syncedCh is closed when synced becomes true.
	syncedCh chan struct{}
}

// countsGap is how often, at most, the counts by state are published
// while jobs change.
const countsGap = 250 * time.Millisecond

func newJobTable(root string, hub *eventHub) *jobTable {
	return &jobTable{root: root, hub: hub, metrics: newServeMetrics(),
		jobs: map[jobstore.JobDir]*jobview.WatchedJob{}, syncedCh: make(chan struct{})}
}

// follow takes updates until the channel closes (ctx done).
func (t *jobTable) follow(ctx context.Context, updates <-chan jobstore.RootUpdate) {
	tick := time.NewTicker(countsGap)
	defer tick.Stop()
	for {
		select {
		case u, ok := <-updates:
			if !ok {
				return
			}
			t.take(u)
		case <-tick.C:
			t.publishCounts()
		case <-ctx.Done():
			return
		}
	}
}

// take records one update and publishes what changed.
func (t *jobTable) take(u jobstore.RootUpdate) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case u.Synced:
		if !t.synced {
			t.synced = true
			close(t.syncedCh)
		}
		return
	case u.Dir == "":
		t.rootErr = u.Err
		t.hub.publish(rootEvent(u.Err), "")
		return
	case u.Removed:
		if _, ok := t.jobs[u.Dir]; ok {
			delete(t.jobs, u.Dir)
			t.dirty = true
			t.hub.publish(removedEvent(u.Dir.ID()), u.Dir.ID())
		}
		return
	}
	t.rootErr = nil
	prev := t.jobs[u.Dir]
	j := jobview.JobFromUpdate(u, nil)
	t.jobs[u.Dir] = j
	if j.Spec != nil {
		t.metrics.declare(j.Spec.Kind)
	}
	t.dirty = true
	if t.synced {
		t.metrics.observe(prev, j)
	}
	t.hub.publish(jobEvent(newPageRow(j.Entry(), j), prev == nil), u.Dir.ID())
}

// publishCounts publishes the counts by state if they changed.
func (t *jobTable) publishCounts() {
	t.mu.Lock()
	dirty := t.dirty
	t.dirty = false
	t.mu.Unlock()
	if dirty {
		t.hub.publish(countsEvent(t.counts()), "")
	}
}

// snapshot returns every job (copies of the rows, sharing the records,
// which are never changed once stored) in List's order, and the root's
// problem, if any.
func (t *jobTable) snapshot() ([]jobstore.Entry, map[jobstore.JobDir]*jobview.WatchedJob, error) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	entries := make([]jobstore.Entry, 0, len(t.jobs))
	rows := make(map[jobstore.JobDir]*jobview.WatchedJob, len(t.jobs))
	for dir, j := range t.jobs {
		entries = append(entries, j.Entry())
		rows[dir] = j
	}
	jobview.SortEntries(entries)
	return entries, rows, t.rootErr
}

// job returns the row of dir, or nil.
func (t *jobTable) job(dir jobstore.JobDir) *jobview.WatchedJob {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.jobs[dir]
}

// counts are the jobs by state (entryState), every known state present,
// and by the filters by schedule, at now.
func (t *jobTable) counts() map[string]int {
	out := map[string]int{jobview.ScheduledState: 0, jobview.RetryingState: 0}
	for _, s := range jobview.StateNames() {
		out[s] = 0
	}
	now := time.Now()
	t.mu.RLock()
	defer t.mu.RUnlock()
	for _, j := range t.jobs {
		en := j.Entry()
		out[jobview.EntryState(en)]++
		for _, f := range []string{jobview.ScheduledState, jobview.RetryingState} {
			if jobview.WaitState(en, now) == f {
				out[f]++
			}
		}
	}
	out["total"] = len(t.jobs)
	return out
}

// pageRow is one job as the root's page shows it, in the page's JSON
// (/api/rows and the events): text only, never markup.
type pageRow struct {
	ID          string     `json:"id"`
	Kind        string     `json:"kind"`
	State       string     `json:"state"` // entryState
	Seq         uint64     `json:"seq"`   // the status's seq (0: none)
	Note        string     `json:"note"`  // the cancel note ("cancel requested")
	Progress    *float64   `json:"progress"`
	Message     string     `json:"message"`
	Attempt     uint64     `json:"attempt"`
	Host        string     `json:"host"`
	SubmittedAt *time.Time `json:"submitted_at"`
	UpdatedAt   *time.Time `json:"updated_at"`
	Error       string     `json:"error"`
	// The schedule (serve_schedule.go): when a queued job is due (nil: at
	// once, or not queued), whether that is a pending retry, its priority
	// and the most attempts it may make (0: one).
	Due         *time.Time `json:"due"`
	Retrying    bool       `json:"retrying"`
	Priority    int        `json:"priority"`
	MaxAttempts int        `json:"max_attempts"`
}

// maxRowText is the most of a message or error a row carries; the job's
// page shows more.
const maxRowText = 300

func newPageRow(en jobstore.Entry, j *jobview.WatchedJob) pageRow {
	r := pageRow{ID: en.Dir.ID(), Kind: "?", State: jobview.EntryState(en)}
	if s := en.Spec; s != nil {
		r.Kind = s.Kind
		at := s.SubmittedAt
		r.SubmittedAt = &at
		r.Priority, r.MaxAttempts = s.Priority, s.MaxAttempts
	}
	if due, retry := jobstore.DueAt(en.Spec, en.Status); !due.IsZero() {
		r.Due, r.Retrying = &due, retry
	}
	if st := en.Status; st != nil {
		r.Seq, r.Progress, r.Message, r.Attempt, r.Host = st.Seq, st.Progress, cutText(st.Message, maxRowText), st.Attempt, st.Host
		at := st.UpdatedAt
		r.UpdatedAt = &at
		if st.Error != "" {
			r.Error = cutText(st.Error, maxRowText)
		}
	}
	if j != nil {
		r.Note = jobview.CancelNote(j.Cancel, j.CancelInfo, en.Status)
	}
	if en.Err != nil {
		r.Error = cutText(termtext.OneLine(remedy.ErrorLine(en.Err)), maxRowText)
	}
	return r
}

// cutText is s cut to at most n bytes (on a rune boundary), with "…"
// when cut.
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !isRuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func isRuneStart(b byte) bool { return b&0xc0 != 0x80 }
