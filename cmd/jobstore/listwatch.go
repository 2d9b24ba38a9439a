package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/axqua/jobstore"
)

// This file is "list --watch": the list table kept current from
// jobstore.WatchRoot, which follows every job of ROOT (added, changed,
// asked to stop, removed). What is drawn is listscreen.go's.

// watchedJob is one row of the table as last learned.
type watchedJob struct {
	dir    jobstore.JobDir
	spec   *jobstore.JobSpec
	status *jobstore.JobStatus
	err    error
	// cancel and cancelInfo: its cancel request, as readCancel tells it.
	cancel     *jobstore.CancelRequest
	cancelInfo recordInfo
	line       string    // last change line printed (plain output)
	since      time.Time // unborn: when it was first seen without job.json
}

// entry is the row as the table prints it.
func (j *watchedJob) entry() jobstore.Entry {
	return jobstore.Entry{Dir: j.dir, Spec: j.spec, Status: j.status, Err: j.err}
}

// listWatcher keeps the table of one root current.
type listWatcher struct {
	ctx    context.Context
	out    io.Writer
	root   string
	term   *terminal // nil: not a terminal, a line per change
	jobs   map[jobstore.JobDir]*watchedJob
	filter *jobFilter // the jobs shown
	asJSON bool       // a JSON object per change (listWatchEventJSON)
	drawn  int        // lines of the table on screen (terminal)
	// unborn: directories without job.json that appeared after the table
	// was first drawn, not shown until unbornGrace has passed (Submit may
	// create the directory before job.json; a removal takes job.json
	// before the directory).
	unborn map[jobstore.JobDir]*watchedJob
}

// unbornGrace is how long a new directory may lack job.json before list
// --watch shows it (as unreadable, as list does): longer than Submit takes
// between the two, even on a slow disk.
const unbornGrace = time.Second

// watchList runs list --watch until ctx is done.
func watchList(ctx context.Context, e *env, root string, poll time.Duration, filter *jobFilter, asJSON bool) error {
	lw := &listWatcher{ctx: ctx, out: e.stdout, root: root, term: e.term, filter: filter, asJSON: asJSON,
		jobs: map[jobstore.JobDir]*watchedJob{}, unborn: map[jobstore.JobDir]*watchedJob{}}
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
		if u.Dir != "" && !isLinkEntry(u) {
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
			j.line = lw.printJSON("job", j)
		}
		lw.printJSON("synced", nil)
	case lw.term == nil:
		writeTable(lw.out, root, lw.entries(), time.Now(), lw.cancelOf, unlimitedCells)
		for _, en := range lw.entries() {
			j := lw.jobs[en.Dir]
			j.line = changeLine(j)
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
		var changed []*watchedJob
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
func (lw *listWatcher) row(u jobstore.RootUpdate, prev *watchedJob) *watchedJob {
	return jobFromUpdate(u, prev)
}

// jobFromUpdate is the job of u as list shows it (see listWatcher.row);
// prev, if not nil, is the row it replaces.
func jobFromUpdate(u jobstore.RootUpdate, prev *watchedJob) *watchedJob {
	j := &watchedJob{dir: u.Dir, spec: u.Spec, status: u.Status, err: u.Err, cancel: u.Cancel}
	if prev != nil {
		j.line = prev.line
	}
	j.cancelInfo = recordInfo{File: jobstore.CancelFile, Present: u.Cancel != nil, Current: jobstore.CancelSchemaVersion}
	var e *jobstore.Error
	if errors.As(u.Err, &e) && e.Path == u.Dir.CancelPath() {
		j.err, j.cancelInfo.Present, j.cancelInfo.Err = nil, true, u.Err
	}
	return j
}

// take records an update and returns the rows it changed (a removed one
// with dir only).
func (lw *listWatcher) take(u jobstore.RootUpdate) []*watchedJob {
	if u.Dir == "" {
		return nil // ROOT unreadable for now: keep what is shown
	}
	if isLinkEntry(u) {
		u = jobstore.RootUpdate{Dir: u.Dir, Removed: true} // gone from List's view
	}
	shown := lw.jobs[u.Dir]
	switch {
	case u.Removed:
		delete(lw.unborn, u.Dir)
		if shown == nil {
			return nil
		}
		return []*watchedJob{lw.drop(shown)}
	case u.Spec == nil && errors.Is(u.Err, jobstore.ErrNotJob):
		// No job.json: a job being submitted or removed. Say now that a
		// shown one is gone; show a directory that stays so once it has
		// stayed so for unbornGrace.
		j := lw.row(u, nil)
		j.since = time.Now()
		if prev := lw.unborn[u.Dir]; prev != nil {
			j.since = prev.since
		}
		lw.unborn[u.Dir] = j
		if shown == nil {
			return nil
		}
		return []*watchedJob{lw.drop(shown)}
	}
	delete(lw.unborn, u.Dir)
	j := lw.row(u, shown)
	lw.jobs[u.Dir] = j
	return []*watchedJob{j}
}

// isLinkEntry reports whether u is about an entry of ROOT that is a
// symbolic link (WatchRoot reports one, ErrNotRegular naming it): list
// skips it, as List does, with or without --watch.
func isLinkEntry(u jobstore.RootUpdate) bool {
	var e *jobstore.Error
	return errors.Is(u.Err, jobstore.ErrNotRegular) && errors.As(u.Err, &e) && e.Path == string(u.Dir)
}

// born shows the directories that have lacked job.json for unbornGrace.
func (lw *listWatcher) born() []*watchedJob {
	var changed []*watchedJob
	for dir, j := range lw.unborn {
		if time.Since(j.since) >= unbornGrace {
			delete(lw.unborn, dir)
			lw.jobs[dir] = j
			changed = append(changed, j)
		}
	}
	return changed
}

// drop forgets a job gone from ROOT and returns a row that says so (dir
// only).
func (lw *listWatcher) drop(j *watchedJob) *watchedJob {
	delete(lw.jobs, j.dir)
	return &watchedJob{dir: j.dir, line: j.line}
}

// cancelOf is readCancel from what is known.
func (lw *listWatcher) cancelOf(dir jobstore.JobDir) (*jobstore.CancelRequest, recordInfo) {
	if j := lw.jobs[dir]; j != nil {
		return j.cancel, j.cancelInfo
	}
	return nil, recordInfo{}
}

// entries are the jobs in List's order: by submission, then ID; those
// without a spec last, by ID.
func (lw *listWatcher) entries() []jobstore.Entry {
	out := make([]jobstore.Entry, 0, len(lw.jobs))
	for _, j := range lw.jobs {
		out = append(out, j.entry())
	}
	sortEntries(out)
	if lw.filter != nil {
		out, _ = lw.filter.apply(out)
	}
	return out
}

// sortEntries puts entries in List's order: by submission, then ID; those
// without a spec last, by ID.
func sortEntries(out []jobstore.Entry) {
	sort.Slice(out, func(a, b int) bool {
		x, y := out[a], out[b]
		if (x.Spec == nil) != (y.Spec == nil) {
			return x.Spec != nil
		}
		if x.Spec != nil && !x.Spec.SubmittedAt.Equal(y.Spec.SubmittedAt) {
			return x.Spec.SubmittedAt.Before(y.Spec.SubmittedAt)
		}
		return x.Dir.ID() < y.Dir.ID()
	})
}

// render redraws the table in place (listscreen.go), with a last line
// saying how to stop.
func (lw *listWatcher) render() {
	lw.redraw("Ctrl-C stops watching " + lw.root)
}

// printChange prints j's change line (or JSON object) if it differs from
// the last printed, and j is one the filter shows, or was.
func (lw *listWatcher) printChange(j *watchedJob) {
	gone := lw.jobs[j.dir] == nil
	if !gone && lw.filter != nil && !lw.filter.match(j.entry()) && j.line == "" {
		return
	}
	if lw.asJSON {
		event := "job"
		if gone {
			event = "removed"
		}
		j.line = lw.printJSON(event, j)
		return
	}
	line := changeLine(j)
	if gone {
		line = j.dir.ID() + "  removed"
	}
	if line == j.line {
		return
	}
	j.line = line
	fmt.Fprintln(lw.out, escapeTerminal(line))
}

// listWatchEventJSON is one line of list --watch --json.
type listWatchEventJSON struct {
	Event string `json:"event"` // job, removed, synced or stopped
	*listJobJSON
	Signal string `json:"signal,omitempty"` // stopped: the signal that stopped the watch
}

// printJSON prints one line of list --watch --json about j (nil for
// synced and stopped), unless it repeats the last one printed for j, and
// returns it.
func (lw *listWatcher) printJSON(event string, j *watchedJob) string {
	ev := listWatchEventJSON{Event: event}
	if j != nil {
		job := listJobJSON{ID: j.dir.ID(), Dir: string(j.dir)}
		if event == "job" {
			job.Spec, job.Status, job.Error, job.Cancel = j.spec, j.status, newErrorJSON(j.err), j.cancel
			job.dueJSON = newDueJSON(j.spec, j.status)
		}
		ev.listJobJSON = &job
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
	if j != nil && line == j.line {
		return line
	}
	fmt.Fprintln(lw.out, line)
	return line
}

// changeLine is j as one line of list --watch's plain output.
func changeLine(j *watchedJob) string {
	en := j.entry()
	id := j.dir.ID()
	switch {
	case en.Err != nil:
		return id + "  unreadable: " + oneLine(errorLine(en.Err))
	case en.Status == nil:
		return id + "  no status yet"
	}
	st := en.Status
	state := string(st.State)
	if note := scheduleNote(en.Spec, st, time.Now()); note != "" {
		state += ", " + note
	}
	if note := attemptNote(en.Spec, st); note != "" {
		state += ", " + note
	}
	if note := cancelNote(j.cancel, j.cancelInfo, st); note != "" {
		state += ", " + note
	}
	line := fmt.Sprintf("%s  %s  %s  seq %d", id, state, fmtProgress(st.Progress), st.Seq)
	if msg := oneLine(st.Message); msg != "" {
		line += "  " + msg
	}
	return line
}
