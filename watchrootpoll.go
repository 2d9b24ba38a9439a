package jobstore

import (
	"errors"
	"io/fs"
	"time"
)

// The poll of the job directories no event covers (one stat each, their
// records read again while their stamp is not clean: cleanStamp), and the
// pool of readers that read a job's records off the watch's goroutine.

// pollJobs is the safety poll: the root, unless its events tell everything,
// and one stat of each polled job directory.
func (w *rootWatch) pollJobs() {
	now := w.readClock()
	w.gen++
	defer w.round.enter()()
	if !w.local || w.rootSub == nil || !w.rootSub.Live() || w.round.listedSince(w.listGen) {
		des, gen, err := w.round.entries(now)
		w.rootProblem(err)
		if err == nil && gen != w.listGen {
			w.listGen = gen
			w.syncRoot(des, now)
		}
	}
	if len(w.polled) > 0 {
		w.statJob(w.polled, now)
	}
}

// statJob stats each job of jobs (one lstat of its directory, relative to a
// descriptor of the root, unless sync stat'ed it in this generation) and
// reads again the records of those whose directory changed.
func (w *rootWatch) statJob(jobs map[*rootJob]struct{}, now time.Time) {
	defer w.round.enter()()
	for j := range jobs {
		if j.gen == w.gen {
			continue
		}
		j.gen = w.gen
		if es, ok := w.lookAtJob(j); ok && j.stamp.lookLate(mtimeStamp(es.stamp), now) {
			w.schedule(j, w.pollMask(j))
		}
	}
}

// lookAtJob stats j's directory for the poll: false, with j dealt with, if it
// is gone or no longer the entry j stands for, or cannot be stat'ed (a
// read then says why).
func (w *rootWatch) lookAtJob(j *rootJob) (entryStat, bool) {
	es, err := w.round.stat(j.name)
	switch {
	case err != nil && errors.Is(err, fs.ErrNotExist):
		w.dropJob(j)
	case err != nil:
		w.schedule(j, maskAll)
	case !isJobEntry(j.name, es.typ) || j.link != (es.typ&fs.ModeSymlink != 0):
		w.dropJob(j)
		w.addJob(j.name, es) // nil if no job any more
		if n := w.jobs[j.name]; n != nil {
			n.gen = w.gen
		}
	default:
		return es, true
	}
	return entryStat{}, false
}

// pollMask is what to read of a job whose directory changed: status.json
// and cancel.json, and job.json while it has not been read.
func (w *rootWatch) pollMask(j *rootJob) readMask {
	if j.spec == nil {
		return maskAll
	}
	return maskStatus | maskCancel
}

// readLoop reads jobs until the watch stops. It touches nothing of a
// rootJob but its dir, which never changes.
func (w *rootWatch) readLoop() {
	for {
		select {
		case <-w.stop:
			return
		case req := <-w.reads:
			r := readJob(req.job, req.mask, req.stamp)
			select {
			case w.results <- r:
			case <-w.stop:
				return
			}
		}
	}
}

// readJob reads the records mask names of j, opening its directory once
// and never through a link, by List's rules: nothing else is read from a
// directory without job.json. With stamp, the directory's modification
// time is taken first.
func readJob(j *rootJob, mask readMask, stamp bool) jobRead {
	r := jobRead{job: j, mask: mask}
	d, err := openJobDir("read job", j.dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			r.missing = true
		} else {
			r.dirErr = err
		}
		return r
	}
	defer d.Close()
	if stamp {
		if fi, err := d.Lstat("."); err == nil {
			r.mtime = fi.ModTime().UnixNano()
		}
	}
	o := newReadOptions(nil)
	if mask&maskSpec != 0 {
		spec, err := readSpecIn(d, o, specSchema())
		if err != nil {
			r.specErr = err
			if errors.Is(err, ErrNotJob) {
				return r
			}
		} else {
			r.spec = &spec
		}
	}
	if mask&maskStatus != 0 {
		r.status, r.statusErr = readStatusIn(d, o, statusSchema())
	}
	if mask&maskCancel != 0 {
		if _, err := d.Lstat(CancelFile); errors.Is(err, fs.ErrNotExist) {
			return r // the usual case, for the price of a stat
		}
		r.cancel, r.cancErr = readCancelIn(d, o)
		if r.cancel != nil && r.cancel.JobID != j.dir.ID() {
			r.cancel, r.cancErr = nil, errWrongJobID("read cancel request", j.dir.CancelPath(), r.cancel.JobID, j.dir)
		}
	}
	return r
}
