package jobstore

import (
	"errors"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/axqua/jobstore/internal/dirstamp"
)

// The jobs a WatchRoot follows: added, replaced and dropped as the root
// changes, a read of a job's records asked for (schedule), and what a read
// found taken in and offered for delivery.

// schedule has mask of j's records read, after the read in flight if any.
func (w *rootWatch) schedule(j *rootJob, mask readMask) {
	if j.gone {
		return
	}
	j.want |= mask
	if j.want == 0 || j.reading || j.waiting {
		return
	}
	j.waiting = true
	w.toRead.enqueue(j)
}

// newJob makes the record of a root entry that is a job (a directory or a
// symbolic link, not a dot-name nor index.json), nil for any other entry.
func (w *rootWatch) newJob(name string, typ fs.FileMode) *rootJob {
	if !isJobEntry(name, typ) {
		return nil
	}
	return &rootJob{name: name, dir: JobDir(filepath.Join(w.root, name)), link: typ&fs.ModeSymlink != 0}
}

// subscribe watches j's directory unless it is a link, events are off, or
// the watch budget (withMaxWatches) is spent.
func (w *rootWatch) subscribe(j *rootJob) *viewSub {
	if w.sink == nil || j.link {
		return nil
	}
	if w.o.maxWatches > 0 && w.watched >= w.o.maxWatches {
		return nil
	}
	j.sub = w.view.subscribe(w.sink, filepath.Join(w.rootAbs, j.name), w.jobFiles)
	if j.sub != nil {
		w.watched++
	}
	return j.sub
}

// examine looks at the root entry name, which an event named: a job
// added, removed, or replaced by another entry.
func (w *rootWatch) examine(name string) {
	if !isJobName(name) {
		return
	}
	es, err := w.round.stat(name)
	j := w.jobs[name]
	switch {
	case err != nil && errors.Is(err, fs.ErrNotExist):
		if j != nil {
			w.dropJob(j)
		}
	case err != nil: // cannot look: a read reports why
		if j != nil {
			w.schedule(j, maskAll)
		}
	case !isJobEntry(name, es.typ):
		if j != nil {
			w.dropJob(j)
		}
	case j == nil:
		w.addJob(name, es)
	case j.link != (es.typ&fs.ModeSymlink != 0): // a directory and a link swapped
		w.dropJob(j)
		w.addJob(name, es)
	default:
		w.schedule(j, maskAll)
	}
}

// addJob starts following a job found after the first listing; fi is its
// entry's lstat. Its first update is sent once it has been read.
func (w *rootWatch) addJob(name string, es entryStat) *rootJob {
	j := w.newJob(name, es.typ)
	if j == nil {
		return nil
	}
	w.jobs[name] = j
	if w.subscribe(j) == nil || !w.local {
		w.polled[j] = struct{}{}
		j.stamp.lookLate(mtimeStamp(es.stamp), w.readClock())
	}
	w.schedule(j, maskAll)
	return j
}

// dropJob forgets j, whose directory is gone; a Removed update is owed if
// anything of it was delivered.
func (w *rootWatch) dropJob(j *rootJob) {
	if j.gone {
		return
	}
	j.gone = true
	j.ver++
	if w.jobs[j.name] == j {
		delete(w.jobs, j.name)
	}
	delete(w.polled, j)
	if j.sub != nil {
		j.sub.Cancel()
		j.sub = nil
		w.watched--
	}
	w.offer(j)
}

// syncRoot reconciles the jobs with a listing of the root: new entries are
// added (stat'ed once, in this poll's generation); a job the listing lacks
// is stat'ed, and removed if it is gone (the listing may be one another
// consumer of the view made before the job was added: rootListing).
func (w *rootWatch) syncRoot(des []dirstamp.Entry, now time.Time) {
	defer w.round.enter()()
	for _, de := range des {
		name := de.Name
		j := w.jobs[name]
		if j != nil && j.link == (de.Type&fs.ModeSymlink != 0) {
			j.seen = w.gen
			continue
		}
		es, err := w.round.stat(name)
		if err != nil {
			continue // gone since the listing
		}
		if j != nil {
			w.dropJob(j)
		}
		if n := w.addJob(name, es); n != nil {
			n.seen, n.gen = w.gen, w.gen
		}
	}
	var unlisted []string
	for _, j := range w.jobs {
		if j.seen != w.gen {
			unlisted = append(unlisted, j.name)
		}
	}
	for _, name := range unlisted {
		w.examine(name)
	}
}

// rootProblem records the root's state after a look: err is what opening
// or listing it returned, nil when it was fine. A root that is gone has
// every job removed.
func (w *rootWatch) rootProblem(err error) {
	if err == nil {
		w.rootErr, w.rootErrSent, w.rootErrDue = nil, "", false
		return
	}
	err = errReadRoot("watch root", w.root, err)
	if errors.Is(err, fs.ErrNotExist) {
		for _, j := range w.jobs {
			w.dropJob(j)
		}
	}
	w.rootErr = err
	w.rootErrDue = err.Error() != w.rootErrSent
}

// applyRead takes in what a reader found about a job.
func (w *rootWatch) applyRead(r jobRead) {
	j := r.job
	j.reading = false
	if j.gone {
		return
	}
	if r.missing {
		w.dropJob(j)
		return
	}
	if r.spec != nil {
		if j.ident != nil && !sameJob(j.ident, r.spec) {
			w.replaceJob(j, r)
			return
		}
		j.ident = r.spec
	}
	switch {
	case r.dirErr != nil: // nothing read: the directory is all there is to say
		j.spec, j.status, j.cancel = nil, nil, nil
		j.specErr, j.statusErr, j.cancErr = nil, nil, nil
		if j.sub != nil && errors.Is(r.dirErr, ErrNotRegular) { // swapped for a link since it was watched
			j.sub.Cancel()
			j.sub = nil
			w.watched--
			w.polled[j] = struct{}{}
		}
	case r.mask&maskSpec != 0 && errors.Is(r.specErr, ErrNotJob): // as List: no job.json, nothing else read
		j.spec, j.status, j.cancel = nil, nil, nil
		j.specErr, j.statusErr, j.cancErr = r.specErr, nil, nil
	default:
		if r.mask&maskSpec != 0 {
			j.spec, j.specErr = r.spec, r.specErr
		}
		if r.mask&maskStatus != 0 {
			w.applyStatus(j, r)
		}
		if r.mask&maskCancel != 0 {
			j.cancel, j.cancErr = r.cancel, r.cancErr
		}
	}
	j.dirErr = r.dirErr
	if _, polled := w.polled[j]; !polled && r.mtime != 0 && w.covers(j, r.mask) {
		// The poll stamps what it polls; a watched job, and one of the
		// first listing, is stamped by its reads, so that after lost events
		// (or at settle) only what changed or is not yet clean is read again.
		j.stamp.lookLate(dirstamp.Stamp{Mtime: r.mtime}, w.readClock())
	}
	j.loaded = true
	j.ver++
	w.offer(j)
	w.schedule(j, 0) // what was asked while this read was in flight
}

// covers reports whether a read of mask, in j's state, read every record
// whose change moves the directory's time: status.json, and cancel.json
// and job.json unless they are known (each is written once).
func (w *rootWatch) covers(j *rootJob, mask readMask) bool {
	return mask&maskStatus != 0 && (mask&maskCancel != 0 || j.cancel != nil) && (mask&maskSpec != 0 || j.spec != nil)
}

// applyStatus takes in a status read: never one older than the newest
// seen. An older one means another job under the same name (read job.json
// to tell) or a writer that went back, whose record is not delivered.
func (w *rootWatch) applyStatus(j *rootJob, r jobRead) {
	switch {
	case r.statusErr != nil:
		j.statusErr = r.statusErr
	case r.status == nil:
		j.status, j.statusErr = nil, nil
	case r.status.Seq < j.topSeq:
		if r.mask&maskSpec == 0 {
			j.want |= maskAll
		}
	default:
		j.status, j.statusErr, j.topSeq = r.status, nil, r.status.Seq
	}
}

// replaceJob ends j, whose directory now holds another job (r read it), and
// follows the new one under the same name, with j's watch.
func (w *rootWatch) replaceJob(j *rootJob, r jobRead) {
	n := &rootJob{name: j.name, dir: j.dir, link: j.link, sub: j.sub, stamp: j.stamp, gen: j.gen, seen: j.seen, ident: r.spec}
	_, polled := w.polled[j]
	j.sub = nil
	w.dropJob(j)
	w.jobs[n.name] = n
	if polled {
		w.polled[n] = struct{}{}
	}
	r.job = n
	w.applyRead(r)
}

// sameJob reports whether two reads of job.json are of the same job.
func sameJob(a, b *JobSpec) bool {
	return a.ID == b.ID && a.Kind == b.Kind && a.SubmittedAt.Equal(b.SubmittedAt)
}
