package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"time"

	"github.com/axqua/jobstore"
)

// This file is "list --watch": the list table kept current, each job
// followed by its own Watch (all of them share the process's one OS
// watcher), ROOT looked at again every poll interval for jobs added or
// removed.

// watchedJob is one row of the table as last learned.
type watchedJob struct {
	dir       jobstore.JobDir
	spec      *jobstore.JobSpec
	specErr   error // job.json unreadable (or absent: retried at each rescan)
	status    *jobstore.JobStatus
	statusErr error
	stop      context.CancelFunc // ends its Watch; nil when none runs
	// cancel and cancelInfo: its cancel request as read once cancel.json
	// exists (cancel.json is written once).
	cancel     *jobstore.CancelRequest
	cancelInfo recordInfo
	line       string // last change line printed (plain output)
}

// entry is the row as the table prints it.
func (j *watchedJob) entry() jobstore.Entry {
	err := j.specErr
	if err == nil {
		err = j.statusErr
	}
	return jobstore.Entry{Dir: j.dir, Spec: j.spec, Status: j.status, Err: err}
}

// active: the job may still change (and be asked to stop).
func (j *watchedJob) active() bool { return j.status == nil || !j.status.State.Terminal() }

// jobUpdate is an Update of one job's Watch.
type jobUpdate struct {
	dir jobstore.JobDir
	u   jobstore.Update
}

// listWatcher keeps the table of one root current.
type listWatcher struct {
	ctx     context.Context
	out     io.Writer
	root    string
	poll    time.Duration
	width   func() int // nil: not a terminal, a line per change
	height  func() int
	jobs    map[jobstore.JobDir]*watchedJob
	updates chan jobUpdate
	drawn   int // lines of the table on screen (terminal)
	// unborn: directories a rescan found without job.json, and when first:
	// not shown until unbornGrace has passed (Submit creates the directory,
	// then job.json, durably: a moment later).
	unborn map[jobstore.JobDir]time.Time
}

// unbornGrace is how long a new directory may lack job.json before list
// --watch shows it (as unreadable, as list does): longer than Submit takes
// between the two, even on a slow disk.
const unbornGrace = time.Second

// watchList runs list --watch until ctx is done.
func watchList(ctx context.Context, e *env, root string, poll time.Duration) error {
	ctx, stopAll := context.WithCancel(ctx)
	defer stopAll() // every Watch ends with the command
	lw := &listWatcher{ctx: ctx, out: e.stdout, root: root, poll: poll, width: e.width,
		jobs: map[jobstore.JobDir]*watchedJob{}, updates: make(chan jobUpdate), unborn: map[jobstore.JobDir]time.Time{}}
	if lw.width != nil {
		lw.height = terminalHeight(e.stdout)
	}

	entries, err := jobstore.List(root)
	if err != nil {
		return err
	}
	for _, en := range entries {
		j := &watchedJob{dir: en.Dir, spec: en.Spec, status: en.Status}
		switch {
		case en.Spec == nil:
			j.specErr = en.Err
		default:
			j.statusErr = en.Err
		}
		j.cancel, j.cancelInfo = readCancel(en.Dir)
		lw.jobs[en.Dir] = j
		lw.follow(j)
	}
	if lw.width == nil {
		printTable(e, root, entries, time.Now())
		for _, j := range lw.jobs {
			j.line = changeLine(j)
		}
	} else {
		lw.render()
	}

	gate := newRedrawGate(redrawGap)
	defer gate.stop()
	rescan := time.NewTicker(poll)
	defer rescan.Stop()
	cancelTick := time.NewTicker(cancelCheckEvery)
	defer cancelTick.Stop()
	pending := false // the table on screen is out of date
	for {
		var changed []*watchedJob
		select {
		case <-ctx.Done():
			lw.stopped()
			return nil
		case ju := <-lw.updates:
			if j := lw.apply(ju); j != nil {
				changed = append(changed, j)
			}
		case <-rescan.C:
			changed = lw.rescan()
			pending = pending || lw.width != nil // AGE moves on
		case <-cancelTick.C:
			changed = lw.checkCancels()
		case <-gate.C():
			gate.fired()
			if pending {
				lw.render()
				pending = false
			}
			continue
		}
		if lw.width == nil {
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

// follow starts j's Watch, unless one runs or j is not a job (yet: a
// directory whose job.json is still being written is retried at the next
// rescan) or has ended.
func (lw *listWatcher) follow(j *watchedJob) {
	if j.stop != nil || !j.active() || errors.Is(j.specErr, jobstore.ErrNotJob) {
		return
	}
	ctx, stop := context.WithCancel(lw.ctx)
	ch, err := jobstore.Watch(ctx, j.dir, jobstore.WithPollInterval(lw.poll))
	if err != nil {
		stop() // gone or not a job after all: the next rescan says
		return
	}
	j.stop = stop
	go func() {
		for u := range ch {
			select {
			case lw.updates <- jobUpdate{j.dir, u}:
			case <-ctx.Done():
				return // Watch ends with ctx
			}
		}
	}()
}

// apply records an update and returns the job it changed (nil: none).
func (lw *listWatcher) apply(ju jobUpdate) *watchedJob {
	j := lw.jobs[ju.dir]
	if j == nil {
		return nil // removed since
	}
	if errors.Is(ju.u.Err, jobstore.ErrNotJob) {
		// job.json gone: the job is being removed. Say so now, not at the
		// next rescan; a directory left without job.json comes back as
		// unreadable from the rescans, as a new one would.
		return lw.drop(j)
	}
	j.status, j.statusErr = ju.u.Status, ju.u.Err
	if j.status == nil && j.statusErr == nil {
		return j // no status.json yet
	}
	if !j.active() && j.stop != nil {
		j.stop() // the Watch has closed; release its context
		j.stop = nil
	}
	// Looked for even if the job has just ended: "cancelled, on request".
	lw.lookForCancel(j)
	return j
}

// drop forgets a job gone from ROOT and returns a row that says so (dir
// only).
func (lw *listWatcher) drop(j *watchedJob) *watchedJob {
	if j.stop != nil {
		j.stop()
	}
	delete(lw.jobs, j.dir)
	return &watchedJob{dir: j.dir}
}

// rescan looks at ROOT again: jobs added are read and followed, jobs gone
// are dropped, a directory that lacked job.json is read again. It returns
// the jobs that changed (dropped ones included, with dir only).
func (lw *listWatcher) rescan() []*watchedJob {
	dirs, err := jobstore.JobDirs(lw.root)
	if err != nil {
		return nil // ROOT unreadable for now: keep what is shown
	}
	var changed []*watchedJob
	there := map[jobstore.JobDir]bool{}
	for _, d := range dirs {
		there[d] = true
		j := lw.jobs[d]
		switch {
		case j == nil:
			if !exists(d.SpecPath()) {
				first, seen := lw.unborn[d]
				if !seen {
					lw.unborn[d] = time.Now()
				}
				if !seen || time.Since(first) < unbornGrace {
					continue
				}
			}
			delete(lw.unborn, d)
			j = &watchedJob{dir: d}
			lw.jobs[d] = j
		case errors.Is(j.specErr, jobstore.ErrNotJob) && exists(d.SpecPath()):
		default:
			continue
		}
		lw.read(j)
		lw.follow(j)
		changed = append(changed, j)
	}
	for d, j := range lw.jobs {
		if !there[d] {
			changed = append(changed, lw.drop(j))
		}
	}
	for d := range lw.unborn {
		if !there[d] {
			delete(lw.unborn, d)
		}
	}
	return changed
}

// read reads a job found by a rescan, as List does.
func (lw *listWatcher) read(j *watchedJob) {
	spec, err := jobstore.ReadSpec(j.dir)
	j.spec, j.specErr = nil, err
	if err == nil {
		j.spec = &spec
	}
	j.status, j.statusErr = jobstore.ReadStatus(j.dir)
	j.cancel, j.cancelInfo = readCancel(j.dir)
}

// checkCancels looks for the cancel request of each job still active that
// has none yet, and returns those that have one now.
func (lw *listWatcher) checkCancels() []*watchedJob {
	var changed []*watchedJob
	for _, j := range lw.jobs {
		if j.active() && lw.lookForCancel(j) {
			changed = append(changed, j)
		}
	}
	return changed
}

// lookForCancel reads j's cancel request if none is known yet and
// cancel.json exists; it reports whether one was found.
func (lw *listWatcher) lookForCancel(j *watchedJob) bool {
	if j.cancelInfo.Present || j.cancelInfo.Err != nil {
		return false
	}
	if _, err := os.Lstat(j.dir.CancelPath()); err != nil {
		return false
	}
	j.cancel, j.cancelInfo = readCancel(j.dir)
	return j.cancelInfo.Present || j.cancelInfo.Err != nil
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
	return out
}

// render redraws the table in place (listscreen.go), with a last line
// saying how to stop.
func (lw *listWatcher) render() {
	lw.redraw("Ctrl-C stops watching " + lw.root)
}

// printChange prints j's change line if it differs from the last printed.
func (lw *listWatcher) printChange(j *watchedJob) {
	line := changeLine(j)
	if lw.jobs[j.dir] == nil {
		line = j.dir.ID() + "  removed"
	}
	if line == j.line {
		return
	}
	j.line = line
	fmt.Fprintln(lw.out, line)
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
	if note := cancelNote(j.cancel, j.cancelInfo, st); note != "" {
		state += ", " + note
	}
	line := fmt.Sprintf("%s  %s  %s  seq %d", id, state, fmtProgress(st.Progress), st.Seq)
	if msg := oneLine(st.Message); msg != "" {
		line += "  " + msg
	}
	return line
}
