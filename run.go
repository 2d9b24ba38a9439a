package jobstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"sync"
	"time"

	"github.com/axqua/jobstore/internal/attempt"
	"github.com/axqua/jobstore/internal/fsevents"
	"github.com/axqua/jobstore/internal/fsys"
)

// Run is a runner's handle on a started job: it holds job.lock and is the
// only writer of status.json until Close. Its methods may be called from
// several goroutines.
//
// Every write puts status.json whole with seq one more than the last and
// updated_at stamped with Now(). seq never wraps: once it is 2^64-1, every
// update (Start's included) is refused with ErrInvalid, Subject "seq", and
// writes nothing. A write that fails leaves the handle's
// status as it was (the next write reuses the seq); status.json is then the
// previous record (see WriteStatus). Progress is coalesced: see Progress
// and WithProgressInterval.
//
// Every record a Run writes carries its Attempt. If the Run loses ownership
// of its job (another host judged it gone after its lease went unrenewed and
// took the job over, or its lease lapsed by its own clock), the write fails
// with ErrNotOwner and writes nothing; from then on every call that writes
// (Progress included) returns ErrNotOwner, and the Run's Context is done with
// it as its cause, so the runner can stop its work. A background progress
// write that fails so is reported by the next call.
type Run struct {
	// wmu serialises the writes of status.json, so that seq never goes back;
	// it is taken before mu. A background progress write holds wmu alone
	// during its I/O, so that Progress (which takes only mu) never waits for
	// the disk.
	wmu      sync.Mutex
	mu       sync.Mutex
	dir      JobDir
	jd       *fsys.Dir // the job directory, held (never through a link) until Close
	spec     JobSpec
	lock     *Lock // nil after Close
	st       JobStatus
	finished bool        // Finish (or interrupt) wrote the attempt's last record
	requeued bool        // and that record put the job back in the queue
	ctx      *runContext // Context, once asked for
	own      ownership   // fixed by Start
	written  fsys.ID     // status.json as this Run last wrote it (zero before its first write)
	lostErr  error       // ErrNotOwner once ownership is lost: sticky
	closed   func()      // set by the view that started it (StartNext): called once, by Close
	progressState
}

// Dir returns the job directory.
func (r *Run) Dir() JobDir { return r.dir }

// Spec returns the job's spec, as read by Start.
func (r *Run) Spec() JobSpec { return r.spec }

// Status returns a copy of the last status written (not a progress update
// still pending: see Flush).
func (r *Run) Status() JobStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	return copyStatus(r.st)
}

// Progress records how far the job is, fraction within [0, 1], and, if
// message is not empty, replaces the message (an empty one keeps it). A
// fraction outside [0, 1] (or NaN) is ErrInvalid and records nothing.
//
// Progress is coalesced: it records the values in memory and returns
// without touching the disk; at most one status write per progress interval
// (WithProgressInterval) carries the latest values, so status.json never
// lags the latest report by more than one interval plus one write. Flush
// writes now; SetMessage, Finish and Close include what is pending. With an
// interval of 0 every call writes before it returns. Progress writes are
// NoSync: after a power cut status.json may show an earlier update.
//
// A background write that fails keeps its values pending, and the next
// Progress call returns its error, wrapped (its own values are recorded all
// the same). Flush, SetMessage, Finish and Close return the result of their
// own write: nil means status.json holds everything reported. How the
// writes are timed: docs/mechanisms.md#progress.
func (r *Run) Progress(fraction float64, message string) error {
	const op = "progress"
	if r.interval == 0 {
		r.wmu.Lock()
		defer r.wmu.Unlock()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.usable(op); err != nil {
		return err
	}
	if err := checkProgress(op, r.dir.StatusPath(), fraction); err != nil {
		return err
	}
	if r.interval > 0 {
		return r.recordProgress(fraction, message)
	}
	next := copyStatus(r.st)
	next.Progress = &fraction
	if message != "" {
		next.Message = message
	}
	return r.writeNext(op, next, Now(), NoSync())
}

// SetMessage replaces the status message (empty clears it), durably. A
// pending progress update is written with it, in the same write.
func (r *Run) SetMessage(message string) error {
	const op = "set message"
	defer r.lockWrite()()
	if err := r.usable(op); err != nil {
		return err
	}
	next := r.withPending()
	next.Message = message
	return r.wrote(r.writeNext(op, next, Now()))
}

// Outcome is how a job ended, for Finish.
type Outcome struct {
	State    State  // Succeeded, Failed or Cancelled
	Message  string // replaces the status message (empty clears it)
	ExitCode *int
	Error    string // what went wrong, for Failed
	Remedy   string // what to do about it
}

// Finish writes the job's terminal status, durably: o's state, message,
// exit code, error and remedy, with finished_at; progress, started_at, pid
// and host stay as they were. o.State must be Succeeded, Failed or Cancelled
// (Lost is for Reconcile), else ErrInvalid and nothing is written. A
// Succeeded outcome of an attempt that has run for its whole timeout (the
// spec's Timeout, from started_at, by this host's clock) is written
// Failed, "timed out", as its Context's end says it is. A
// pending progress update is included, so the terminal record carries the
// last progress reported. After a Finish that returned nil, Progress,
// SetMessage and Finish fail with ErrWrongState; a Finish that failed may be
// tried again. Finish does not release the lock: Close does. It ends the
// run's Context.
//
// If the job has a cancel request when Finish writes, a Cancelled outcome
// without a message gets one naming the request, and a Succeeded or Failed
// outcome stands with a note appended to its message that the request came
// too late; cancel.json stays either way.
func (r *Run) Finish(o Outcome) error {
	const op = "finish"
	defer r.lockWrite()()
	if err := r.usable(op); err != nil {
		return err
	}
	if !o.State.Terminal() || o.State == Lost {
		return errInvalid(op, r.dir.StatusPath(), invalid{subject: "state", found: string(o.State), supported: []State{Succeeded, Failed, Cancelled}, msg: fmt.Sprintf("%q is not a state a runner finishes in", o.State)})
	}
	next := r.withPending()
	now := Now()
	if o.State == Succeeded && r.timedOut(now) {
		o.State, o.Error, o.Remedy = Failed, causeMessage(r.timeoutCause()), timeoutRemedy
	}
	cancelled := findCancelIn(r.jd) // looked up once: the message and the retry decision agree
	next.State, next.Message, next.Error, next.Remedy = o.State, finishMessage(cancelled, o.State, o.Message), o.Error, o.Remedy
	next.FinishedAt = &now
	next.ExitCode = nil
	if o.ExitCode != nil {
		code := *o.ExitCode
		next.ExitCode = &code
	}
	end := endOf(&next, o.State, now)
	if due, ok := retryDue(r.spec, &next, end, cancelled != nil, now); ok {
		return r.requeue(op, requeued(r.spec, &next, end, due), now)
	}
	if keepsAttempts(r.spec, &next) {
		next.Attempts = withEnd(&next, end)
	}
	if err := r.wrote(r.writeNext(op, next, now)); err != nil {
		return err
	}
	r.finished = true
	r.endContext()
	retire(r.dir)
	return nil
}

// requeue ends the Run's attempt by writing q, the job queued again, and
// finishes the Run. Close leaves the attempt's claim as a finished job's
// is (.run-N, not ended): the next Start claims the attempt after the one
// q names, and a process whose view of status.json still says running
// (a network filesystem client's cache) judges this runner by its lease,
// which outlasts that view, never by an ended claim that would let it take
// the job over at once and write over q. Callers hold r.wmu and r.mu.
func (r *Run) requeue(op string, q JobStatus, now time.Time) error {
	if err := r.wrote(r.writeNext(op, q, now)); err != nil {
		return err
	}
	r.finished, r.requeued = true, true
	r.endContext()
	return nil
}

// interrupt ends the Run's attempt as its worker stopped it before the job
// ended: the job is queued again at once, and the attempt, kept in the
// status's attempts as failed and interrupted (why), counts against no
// MaxAttempts. A job with a cancel request is finished cancelled instead.
// Like Finish, it fails once the Run has finished.
func (r *Run) interrupt(why string) error {
	const op = "interrupt"
	defer r.lockWrite()()
	if err := r.usable(op); err != nil {
		return err
	}
	next := r.withPending()
	now := Now()
	if p := findCancelIn(r.jd); p != nil {
		next.State, next.Message, next.FinishedAt = Cancelled, finishMessage(p, Cancelled, why), &now
		if keepsAttempts(r.spec, &next) {
			next.Attempts = withEnd(&next, endOf(&next, Cancelled, now))
		}
		if err := r.wrote(r.writeNext(op, next, now)); err != nil {
			return err
		}
		r.finished = true
		r.endContext()
		return nil
	}
	next.Error = why
	end := endOf(&next, Failed, now)
	end.Interrupted = true
	return r.requeue(op, requeued(r.spec, &next, end, now), now)
}

// Close writes a pending progress update (NoSync), stops the progress
// timer, ends the run's Context, stops renewing the lease, ends the attempt
// of a job closed without Finish (.run-N becomes .fenced-N; a finished
// job's attempt directory stays as it is), and releases job.lock, even if that
// write fails (its error is returned). It does not otherwise change status.json:
// a job closed without Finish still says running, and Reconcile will mark
// it lost. Closing twice is not an error, and neither is closing a nil *Run
// (what Start returns with an error), which holds nothing and returns nil.
func (r *Run) Close() error {
	if r == nil {
		return nil
	}
	r.wmu.Lock()
	defer r.wmu.Unlock()
	r.mu.Lock()
	werr := r.closeProgress()
	lk := r.lock
	r.lock = nil
	r.endContext()
	lost, finished := r.lostErr != nil, r.finished
	r.mu.Unlock()
	if lk == nil {
		return nil
	}
	rerr := r.release(lost, finished)
	uerr := lk.Unlock()
	if r.closed != nil {
		r.closed()
	}
	return errors.Join(werr, rerr, uerr, r.jd.Close())
}

// endCause is why the Run's context ends when the run does: nil while the
// run is live. The caller holds r.mu.
func (r *Run) endCause() error {
	switch {
	case r.lostErr != nil:
		return r.lostErr
	case r.finished:
		return errBecause("finish", r.dir.StatusPath(), context.Canceled,
			fmt.Sprintf("the run finished (%s); its context ends with it", r.st.State), "")
	case r.lock == nil:
		return errBecause("close", r.dir.StatusPath(), context.Canceled,
			"the run was closed; its context ends with it", "")
	}
	return nil
}

// endContext ends the Run's context, if it was asked for, when the run
// finishes or closes. The caller holds r.mu.
func (r *Run) endContext() {
	if r.ctx != nil {
		r.ctx.finish(r.endCause())
	}
}

// Context returns a context that is done when the job is asked to stop or
// when the run ends, whichever comes first. Pass it to the job's work.
//
// Asked to stop: once cancel.json exists in the job directory (RequestCancel,
// `jobstore cancel`, any tool that follows the file format), the context is
// done, as soon as a file system event tells or within a safety poll of
// about a second where none does (NFS, SMB, FUSE written by another host);
// the latency is not a promise. Its context.Cause is an *Error of kind
// ErrCancelRequested naming the requester, the time and the reason (or
// wrapping the read error if cancel.json cannot be read). The runner should
// then stop and call Finish(Outcome{State: Cancelled}). A request already
// there at the first call ends the context at once.
//
// The run ends: after a Finish that returned nil, or Close, the context is
// done with a cause that matches context.Canceled and says which (the first
// cause stands). Later calls return the same context; its watch holds a
// goroutine until the run finishes or closes: always Close a Run. What it
// watches and what that costs: docs/mechanisms.md#run.
func (r *Run) Context() context.Context {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ctx == nil {
		ended := r.endCause()
		r.ctx = newRunContext(r.dir, ended, cancelPollInterval)
		if t := r.spec.Timeout; t > 0 && ended == nil && r.st.StartedAt != nil {
			r.ctx.endAt(r.st.StartedAt.Add(t), r.timeoutCause())
		}
	}
	return r.ctx.ctx
}

// timeoutRemedy is the remedy of an attempt that timed out.
const timeoutRemedy = "raise the job's timeout, or make its work faster"

// timeoutCause is why the Run's context ends at the job's timeout.
func (r *Run) timeoutCause() error {
	return errBecause("run", r.dir.StatusPath(), context.DeadlineExceeded,
		fmt.Sprintf("timed out: the attempt ran for its whole timeout of %v", r.spec.Timeout), timeoutRemedy)
}

// timedOut reports whether the Run's attempt has run for its whole
// timeout by now (never without one). The caller holds r.mu.
func (r *Run) timedOut(now time.Time) bool {
	t := r.spec.Timeout
	return t > 0 && r.st.StartedAt != nil && !now.Before(r.st.StartedAt.Add(t))
}

// Flush writes a pending progress update now (NoSync), and returns its
// error; with nothing pending it does nothing and returns nil. After a nil
// Flush, status.json holds every value Progress was given before it.
func (r *Run) Flush() error {
	defer r.lockWrite()()
	if !r.pending.set {
		r.bgErr = nil // what failed has since been written
		return nil
	}
	if err := r.usable("flush"); err != nil {
		return err
	}
	return r.wrote(r.writeNext("flush", r.withPending(), Now(), NoSync()))
}

// Lease reports the Run's lease period and when the lease was last renewed,
// by this process's monotonic clock (compare it with time.Now, not with a
// wall clock). Another process may judge the Run gone once it has seen the
// lease go a whole period unrenewed (WithLease); the Run itself stops
// writing once its last renewal is two thirds of a period old, and
// re-establishes its claim before its next write. A supervisor of the
// job's work polls it to stop that work before anyone may take the job
// over (jobstore work does). Lease may wait for a renewal being written;
// after the Run lost its job or was closed, renewed no longer moves.
func (r *Run) Lease() (period time.Duration, renewed time.Time) {
	r.mu.Lock()
	ren, period := r.own.ren, r.own.lease
	r.mu.Unlock()
	return period, ren.Renewed()
}

// writeNext publishes next as the new status (seq and updated_at filled in) and,
// only if that worked, makes it the handle's status. Callers hold r.wmu and
// r.mu (begin too: the renewer runs before its first write).
func (r *Run) writeNext(op string, next JobStatus, now time.Time, opts ...WriteOption) error {
	if err := r.ensureOwner(); err != nil {
		r.noteLost(err)
		return err
	}
	next, err := r.stamp(op, next, now)
	if err != nil {
		return err
	}
	r.lastWrite = time.Now()
	if err := r.put(next, opts...); err != nil {
		r.noteLost(err)
		return err
	}
	r.st = next
	return nil
}

// stamp fills in what every write carries: the schema version, the job ID,
// the next seq, updated_at and the attempt the Run owns. Callers hold r.wmu, so the seq is theirs.
func (r *Run) stamp(op string, next JobStatus, now time.Time) (JobStatus, error) {
	seq, err := nextSeq(op, r.dir.StatusPath(), r.st.Seq)
	if err != nil {
		return next, err
	}
	next.SchemaVersion = StatusSchemaVersion // as a reader sees it; the file gets the version the record needs
	next.JobID = r.dir.ID()
	next.Seq = seq
	next.UpdatedAt = now
	next.Attempt = r.own.claim.N()
	return next, nil
}

// lockWrite takes wmu, then mu, for a write that holds both throughout;
// the function it returns releases them.
func (r *Run) lockWrite() (unlock func()) {
	r.wmu.Lock()
	r.mu.Lock()
	return func() {
		r.mu.Unlock()
		r.wmu.Unlock()
	}
}

// usable reports why the handle cannot write any more, if it cannot.
func (r *Run) usable(op string) error {
	switch {
	case r.requeued:
		return errWrongState(op, r.dir.StatusPath(), invalid{found: string(r.st.State), msg: "this attempt ended and the job is queued again; the next attempt's runner writes its status", remedy: "do not update a job after Finish"})
	case r.finished:
		return errWrongState(op, r.dir.StatusPath(), invalid{found: string(r.st.State), msg: fmt.Sprintf("the job is finished (%s); its status is final", r.st.State), remedy: "do not update a job after Finish; submit a new job to run again"})
	case r.lock == nil:
		return errInvalid(op, r.dir.StatusPath(), invalid{subject: "run", msg: "the run is closed and no longer holds job.lock", remedy: "write updates before Close"})
	case r.lostErr != nil:
		return r.lostErr
	}
	return nil
}

// put writes next as the owner of r's attempt; callers have stamped it and
// re-established a lapsed lease (ensureOwner). The write is refused by the
// filesystem once the attempt was fenced (ErrNotOwner), and by the Run
// itself when status.json is no longer the file the Run last wrote: another
// writer replaced it (ErrNotOwner too: the Run stops rather than overwrite
// a record that is not its own). Callers hold r.wmu.
func (r *Run) put(next JobStatus, opts ...WriteOption) error {
	n := r.own.claim.N()
	if err := r.notReplaced(); err != nil {
		return err
	}
	var written fsys.ID
	if err := writeStatusAs(r.own.claim, r.dir, next, &written, opts...); err != nil {
		return r.fenceError("write status", n, err)
	}
	r.written = written
	return nil
}

// notReplaced checks that status.json is still the file this Run last
// wrote (nothing to check before its first write). Another regular file
// there is a record another writer put in its place: ErrNotOwner, naming
// what it says. Nothing there (removed), or something that is not a record,
// is left to the write, which puts the record back or fails. Callers hold
// r.wmu.
func (r *Run) notReplaced() error {
	const op = "write status"
	if r.written == (fsys.ID{}) {
		return nil
	}
	id, err := r.jd.EntryID(StatusFile)
	switch {
	case err == nil && id == r.written:
		return nil
	case errors.Is(err, fs.ErrNotExist):
		return nil // removed, not replaced: the write puts the record back
	case err != nil:
		return stepError(op, r.dir.StatusPath(), unwrapPath(err), "cannot look at status.json before writing it", "")
	}
	if fi, err := r.jd.Lstat(StatusFile); err != nil || !fi.Mode().IsRegular() {
		return nil // not a record: the write replaces it, or fails in its own way
	}
	now := "its record cannot be read"
	if st, rerr := readStatusIn(r.jd, newReadOptions(nil), statusSchema()); rerr == nil && st != nil {
		now = fmt.Sprintf("it now says %s, seq %d (this run wrote seq %d)", st.State, st.Seq, r.st.Seq)
	}
	n := r.own.claim.N()
	return errNotOwner(op, r.dir.StatusPath(), n, nil, "status.json was replaced by a write that is not this run's: "+now+
		"; this run no longer owns the job and wrote nothing")
}

// notOwner is ErrNotOwner for r's attempt, found fenced by op.
func (r *Run) notOwner(op string, cause error) error {
	n := r.own.claim.N()
	return errNotOwner(op, runPath(r.dir, n), n, nil, "attempt "+strconv.FormatUint(n, 10)+
		" was taken over: another process judged this runner gone, and its claim is now "+attempt.FencedName(n)+
		"; nothing was written ("+rootCause(cause).Error()+")")
}

// fenceError is ownerWriteError for r's writes.
func (r *Run) fenceError(op string, n uint64, err error) error {
	return ownerWriteError(op, r.dir, n, err)
}

// noteLost makes an ErrNotOwner sticky and ends the Run's Context with it.
// Callers hold r.mu.
func (r *Run) noteLost(err error) {
	if r.lostErr != nil || !errors.Is(err, ErrNotOwner) {
		return
	}
	r.lostErr = err
	if r.ctx != nil {
		r.ctx.finish(err)
	}
}

// runContext is a Run's Context and the watch that ends it when a cancel
// request appears.
type runContext struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	await  *fsevents.Await // nil when the context ended before it was needed
	timer  *time.Timer     // ends it at the job's timeout; nil without one
}

// endAt ends the context with cause at t (the attempt's timeout).
func (rc *runContext) endAt(t time.Time, cause error) {
	rc.timer = time.AfterFunc(time.Until(t), func() { rc.cancel(cause) })
}

// newRunContext starts the context of a Run in dir; poll is the safety
// poll of its wait for cancel.json (cancelPollInterval but in tests).
func newRunContext(dir JobDir, ended error, poll time.Duration) *runContext {
	ctx, cancel := context.WithCancelCause(context.Background())
	rc := &runContext{ctx: ctx, cancel: cancel}
	if ended != nil {
		cancel(ended)
		return rc
	}
	rc.await = fsevents.StartAwaitLater(string(dir), CancelFile, poll, true, func() {
		p := findCancel(dir)
		if p == nil { // removed by hand between the look and the read
			p = &pendingCancel{err: errBecause("read cancel request", dir.CancelPath(), nil, "vanished after it appeared", "")}
		}
		cancel(p.asError("cancel", dir, "", "stop the job's work, then call Finish(Outcome{State: Cancelled})"))
	})
	return rc
}

// finish ends the context with cause (unless it ended already) and stops the
// watch, releasing its goroutine and OS handles.
func (rc *runContext) finish(cause error) {
	rc.cancel(cause)
	if rc.await != nil {
		rc.await.Stop()
	}
	if rc.timer != nil {
		rc.timer.Stop()
	}
}
