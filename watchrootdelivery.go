package jobstore

import (
	"bytes"
	"maps"
)

// What a receiver of WatchRoot is owed, and in which order: the first
// listing's jobs, then Synced, then the root's problem and the changes in
// the order they were seen, each job's latest view only.

// offer queues j's update if the receiver does not have its view yet.
// A job of the first listing waits in its queue until its first update.
func (w *rootWatch) offer(j *rootJob) {
	if j.inFirst || j.queued || !w.owed(j) {
		return
	}
	j.queued = true
	w.changes.enqueue(j)
}

// owed reports whether the receiver lacks j's latest view.
func (w *rootWatch) owed(j *rootJob) bool {
	if j.gone {
		return j.delivered && !j.sent.removed
	}
	return j.loaded && (!j.delivered || j.view() != j.sent)
}

// What w.next holds.
const (
	noUpdate = iota
	jobUpdate
	syncedUpdate
	rootUpdate
)

// prepare puts in w.next what is to be delivered next, if anything:
// before Synced, the first listing's jobs in order, then Synced; after,
// the root's problem, then the queued changes in order.
func (w *rootWatch) prepare() {
	kind, j := w.headUpdate()
	if kind == w.nextKind && j == w.nextJob && (j == nil || j.ver == w.nextVer) && kind != rootUpdate {
		return
	}
	w.nextKind, w.nextJob = kind, j
	switch kind {
	case jobUpdate:
		w.next, w.nextVer = j.nextUpdate(), j.ver
	case syncedUpdate:
		w.next = RootUpdate{Synced: true}
	case rootUpdate:
		w.next = RootUpdate{Err: w.rootErr}
	default:
		w.next = RootUpdate{}
	}
}

// headUpdate is what is to be delivered next; it drops from the queues what is
// no longer owed (a job removed before its first update, a view that came
// back to what was delivered).
func (w *rootWatch) headUpdate() (int, *rootJob) {
	if !w.synced {
		for j := w.first.peek(); j != nil; j = w.first.peek() {
			if !j.gone {
				return jobUpdate, j
			}
			w.first.pop()
			j.inFirst = false
		}
		if w.scanned != nil {
			return noUpdate, nil // more of the first listing to come
		}
		return syncedUpdate, nil
	}
	if w.rootErrDue {
		return rootUpdate, nil
	}
	for j := w.changes.peek(); j != nil; j = w.changes.peek() {
		if w.owed(j) {
			return jobUpdate, j
		}
		w.changes.pop()
		j.queued = false
	}
	return noUpdate, nil
}

// delivered records that w.next was received.
func (w *rootWatch) delivered() {
	switch w.nextKind {
	case jobUpdate:
		j := w.nextJob
		if j.inFirst {
			w.first.pop()
			j.inFirst = false
		} else {
			w.changes.pop()
			j.queued = false
		}
		j.delivered = true
		if j.gone {
			j.sent.removed = true
		} else {
			j.sent = j.view()
			w.offer(j) // changes that came before Synced
		}
	case syncedUpdate:
		w.synced = true
		for _, j := range w.jobs {
			w.offer(j) // changes of the first listing's jobs wait for Synced
		}
	case rootUpdate:
		w.rootErrSent, w.rootErrDue = w.rootErr.Error(), false
	}
	w.nextKind, w.nextJob = noUpdate, nil
}

// view is what an update of j says now, in short.
func (j *rootJob) view() sentView {
	v := sentView{spec: j.spec != nil, cancel: j.cancel != nil}
	if st := j.shownStatus(); st != nil {
		v.status, v.seq = true, st.Seq
	}
	if err := j.firstErr(); err != nil {
		v.err = err.Error()
	}
	return v
}

// shownStatus is the status an update shows: none while status.json is
// unreadable (as List).
func (j *rootJob) shownStatus() *JobStatus {
	if j.statusErr != nil {
		return nil
	}
	return j.status
}

// firstErr is the first problem of j's view: its directory's, then
// job.json's, status.json's, cancel.json's.
func (j *rootJob) firstErr() error {
	for _, err := range []error{j.dirErr, j.specErr, j.statusErr, j.cancErr} {
		if err != nil {
			return err
		}
	}
	return nil
}

// nextUpdate is j's update: its records as last read, the receiver's own.
func (j *rootJob) nextUpdate() RootUpdate {
	if j.gone {
		return RootUpdate{Dir: j.dir, Removed: true}
	}
	u := RootUpdate{Dir: j.dir, Err: j.firstErr()}
	if j.spec != nil {
		s := copySpec(*j.spec)
		u.Spec = &s
	}
	if st := j.shownStatus(); st != nil {
		s := copyStatus(*st)
		u.Status = &s
	}
	if j.cancel != nil {
		c := *j.cancel
		u.Cancel = &c
	}
	return u
}

// copySpec copies spec deeply, so that no slice or map is shared.
func copySpec(spec JobSpec) JobSpec {
	spec.Params = bytes.Clone(spec.Params)
	spec.Labels = maps.Clone(spec.Labels)
	return spec
}
