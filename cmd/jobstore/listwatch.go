package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/jobview"
	"github.com/axqua/jobstore/cmd/jobstore/internal/remedy"
	"github.com/axqua/jobstore/cmd/jobstore/internal/termtext"
)

// This file is "list --watch": the list table kept current from
// jobstore.WatchRoot, which follows every job of ROOT (added, changed,
// asked to stop, removed). What is drawn is listscreen.go's.

// listWatcher keeps the table of one root current.
type listWatcher struct {
	ctx    context.Context
	out    io.Writer
	root   string
	term   *terminal // nil: not a terminal, a line per change
	jobs   map[jobstore.JobDir]*jobview.WatchedJob
	filter *jobview.JobFilter // the jobs shown
	asJSON bool               // a JSON object per change (listWatchEventJSON)
	drawn  int                // lines of the table on screen (terminal)
	// unborn: directories without job.json that appeared after the table
	// was first drawn, not shown until unbornGrace has passed (Submit may
	// create the directory before job.json; a removal takes job.json
	// before the directory).
	unborn map[jobstore.JobDir]*jobview.WatchedJob
}

// unbornGrace is how long a new directory may lack job.json before list
// --watch shows it (as unreadable, as list does): longer than Submit takes
// between the two, even on a slow disk.
const unbornGrace = time.Second

// watchList runs list --watch until ctx is done.
func watchList(ctx context.Context, e *env, root string, poll time.Duration, filter *jobview.JobFilter, asJSON bool) error {
	lw := &listWatcher{ctx: ctx, out: e.stdout, root: root, term: e.term, filter: filter, asJSON: asJSON,
		jobs: map[jobstore.JobDir]*jobview.WatchedJob{}, unborn: map[jobstore.JobDir]*jobview.WatchedJob{}}
	if asJSON {
		lw.term = nil
	}
	updates, err := jobstore.WatchRoot(ctx, root, jobstore.WithPollInterval(poll))
	if err != nil {
		return err
	}
	for u := range updates {
		if u.Synced {
			break
		}
		if u.Dir != "" && !jobview.IsLinkEntry(u) {
			lw.jobs[u.Dir] = lw.row(u, nil)
		}
	}
	if ctx.Err() != nil {
		lw.stopped()
		return nil
	}
	switch {
	case lw.asJSON:
		for _, en := range lw.entries() {
			j := lw.jobs[en.Dir]
			j.Line = lw.printJSON("job", j)
		}
		lw.printJSON("synced", nil)
	case lw.term == nil:
		writeTable(lw.out, root, lw.entries(), time.Now(), lw.cancelOf, unlimitedCells)
		for _, en := range lw.entries() {
			j := lw.jobs[en.Dir]
			j.Line = changeLine(j)
		}
	default:
		lw.render()
	}

	gate := newRedrawGate(redrawGap)
	defer gate.stop()
	tick := time.NewTicker(poll)
	defer tick.Stop()
	pending := false // the table on screen is out of date
	for {
		var changed []*jobview.WatchedJob
		select {
		case <-ctx.Done():
			lw.stopped()
			return nil
		case u, ok := <-updates:
			if !ok { // closed as ctx ends
				updates = nil
				continue
			}
			changed = lw.take(u)
		case <-tick.C:
			changed = lw.born()
			pending = pending || lw.term != nil // AGE moves on
		case <-gate.C():
			gate.fired()
			if pending {
				lw.render()
				pending = false
			}
			continue
		}
		if lw.term == nil {
			for _, j := range changed {
				lw.printChange(j)
			}
			continue
		}
		if len(changed) > 0 || pending {
			if gate.ask() {
				lw.render()
				pending = false
			} else {
				pending = true
			}
		}
	}
}

// row is the job of u, as list shows it: a cancel.json that cannot be
// read is the row's cancel note, not its error (list reads it apart).
// prev, if not nil, is the row it replaces.
func (lw *listWatcher) row(u jobstore.RootUpdate, prev *jobview.WatchedJob) *jobview.WatchedJob {
	return jobview.JobFromUpdate(u, prev)
}

// take records an update and returns the rows it changed (a removed one
// with dir only).
func (lw *listWatcher) take(u jobstore.RootUpdate) []*jobview.WatchedJob {
	if u.Dir == "" {
		return nil // ROOT unreadable for now: keep what is shown
	}
	if jobview.IsLinkEntry(u) {
		u = jobstore.RootUpdate{Dir: u.Dir, Removed: true} // gone from List's view
	}
	shown := lw.jobs[u.Dir]
	switch {
	case u.Removed:
		delete(lw.unborn, u.Dir)
		if shown == nil {
			return nil
		}
		return []*jobview.WatchedJob{lw.drop(shown)}
	case u.Spec == nil && errors.Is(u.Err, jobstore.ErrNotJob):
		// No job.json: a job being submitted or removed. Say now that a
		// shown one is gone; show a directory that stays so once it has
		// stayed so for unbornGrace.
		j := lw.row(u, nil)
		j.Since = time.Now()
		if prev := lw.unborn[u.Dir]; prev != nil {
			j.Since = prev.Since
		}
		lw.unborn[u.Dir] = j
		if shown == nil {
			return nil
		}
		return []*jobview.WatchedJob{lw.drop(shown)}
	}
	delete(lw.unborn, u.Dir)
	j := lw.row(u, shown)
	lw.jobs[u.Dir] = j
	return []*jobview.WatchedJob{j}
}

// born shows the directories that have lacked job.json for unbornGrace.
func (lw *listWatcher) born() []*jobview.WatchedJob {
	var changed []*jobview.WatchedJob
	for dir, j := range lw.unborn {
		if time.Since(j.Since) >= unbornGrace {
			delete(lw.unborn, dir)
			lw.jobs[dir] = j
			changed = append(changed, j)
		}
	}
	return changed
}

// drop forgets a job gone from ROOT and returns a row that says so (dir
// only).
func (lw *listWatcher) drop(j *jobview.WatchedJob) *jobview.WatchedJob {
	delete(lw.jobs, j.Dir)
	return &jobview.WatchedJob{Dir: j.Dir, Line: j.Line}
}

// cancelOf is readCancel from what is known.
func (lw *listWatcher) cancelOf(dir jobstore.JobDir) (*jobstore.CancelRequest, jobview.RecordInfo) {
	if j := lw.jobs[dir]; j != nil {
		return j.Cancel, j.CancelInfo
	}
	return nil, jobview.RecordInfo{}
}

// entries are the jobs in List's order: by submission, then ID; those
// without a spec last, by ID.
func (lw *listWatcher) entries() []jobstore.Entry {
	out := make([]jobstore.Entry, 0, len(lw.jobs))
	for _, j := range lw.jobs {
		out = append(out, j.Entry())
	}
	jobview.SortEntries(out)
	if lw.filter != nil {
		out, _ = lw.filter.Apply(out)
	}
	return out
}

// render redraws the table in place (listscreen.go), with a last line
// saying how to stop.
func (lw *listWatcher) render() {
	lw.redraw("Ctrl-C stops watching " + lw.root)
}

// printChange prints j's change line (or JSON object) if it differs from
// the last printed, and j is one the filter shows, or was.
func (lw *listWatcher) printChange(j *jobview.WatchedJob) {
	gone := lw.jobs[j.Dir] == nil
	if !gone && lw.filter != nil && !lw.filter.Match(j.Entry()) && j.Line == "" {
		return
	}
	if lw.asJSON {
		event := "job"
		if gone {
			event = "removed"
		}
		j.Line = lw.printJSON(event, j)
		return
	}
	line := changeLine(j)
	if gone {
		line = j.Dir.ID() + "  removed"
	}
	if line == j.Line {
		return
	}
	j.Line = line
	fmt.Fprintln(lw.out, termtext.EscapeTerminal(line))
}

// listWatchEventJSON is one line of list --watch --json.
type listWatchEventJSON struct {
	Event string `json:"event"` // job, removed, synced or stopped
	*jobview.ListJobJSON
	Signal string `json:"signal,omitempty"` // stopped: the signal that stopped the watch
}

// printJSON prints one line of list --watch --json about j (nil for
// synced and stopped), unless it repeats the last one printed for j, and
// returns it.
func (lw *listWatcher) printJSON(event string, j *jobview.WatchedJob) string {
	ev := listWatchEventJSON{Event: event}
	if j != nil {
		job := jobview.ListJobJSON{ID: j.Dir.ID(), Dir: string(j.Dir)}
		if event == "job" {
			job.Spec, job.Status, job.Error, job.Cancel = j.Spec, j.Status, remedy.NewErrorJSON(j.Err), j.Cancel
			job.DueJSON = jobview.NewDueJSON(j.Spec, j.Status)
		}
		ev.ListJobJSON = &job
	}
	if event == "stopped" {
		if stop := stopCause(lw.ctx); stop != nil {
			ev.Signal = signalName(stop.sig)
		}
	}
	b, err := json.Marshal(ev)
	if err != nil {
		b = []byte(`{"event": "` + event + `"}`)
	}
	line := string(b)
	if j != nil && line == j.Line {
		return line
	}
	fmt.Fprintln(lw.out, line)
	return line
}

// changeLine is j as one line of list --watch's plain output.
func changeLine(j *jobview.WatchedJob) string {
	en := j.Entry()
	id := j.Dir.ID()
	switch {
	case en.Err != nil:
		return id + "  unreadable: " + termtext.OneLine(remedy.ErrorLine(en.Err))
	case en.Status == nil:
		return id + "  no status yet"
	}
	st := en.Status
	state := string(st.State)
	if note := jobview.ScheduleNote(en.Spec, st, time.Now()); note != "" {
		state += ", " + note
	}
	if note := jobview.AttemptNote(en.Spec, st); note != "" {
		state += ", " + note
	}
	if note := jobview.CancelNote(j.Cancel, j.CancelInfo, st); note != "" {
		state += ", " + note
	}
	line := fmt.Sprintf("%s  %s  %s  seq %d", id, state, jobview.FmtProgress(st.Progress), st.Seq)
	if msg := termtext.OneLine(st.Message); msg != "" {
		line += "  " + msg
	}
	return line
}
