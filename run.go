package jobstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/axqua/jobstore/internal/attempt"
	"github.com/axqua/jobstore/internal/fsys"
)

// Submit creates a job under root, whole or not at all: it gives spec an
// ID from NewJobID when spec.ID is empty, creates root if missing
// (durably), and makes the job directory holding job.json (as WriteSpec
// stamps and validates it, read-only) and the first status.json (queued,
// seq 1).
//
// The job is built in a directory of root's hidden ".submit" (made by the
// first Submit and kept; every scan skips it), named ID + "-" + digits,
// each record written and fsynced there and the directory fsynced, then
// renamed to the job's name in root without replacing anything
// (RENAME_NOREPLACE on Linux; MoveFileEx without REPLACE_EXISTING on
// Windows; elsewhere rename(2), which replaces only an empty directory),
// and .submit and root are fsynced. So a reader, List and Reconcile
// see the job with both records or not at all; a Submit killed or failing
// (a full disk) at any instant leaves at most the hidden directory, which
// a failing Submit removes itself and ReconcileAll and RebuildIndex remove
// once it is older than DefaultSweepAge. If Submit returns nil, the job is
// durable; if it returns an error, there is no job of that ID made by this
// call, except when only root's fsync failed (the error says so).
//
// An ID that is taken (a job, a directory that is not empty or a file at
// root/ID) is an *Error of kind ErrExists (which matches fs.ErrExist), and
// nothing is changed; of several Submits of one ID, in one process or
// many, exactly one makes the job. An empty directory at root/ID is no job
// and is replaced; a symbolic link there is ErrNotRegular, never followed
// nor replaced. Invalid input is ErrInvalid before anything is touched.
func Submit(root string, spec JobSpec) (JobDir, error) {
	const op = "submit"
	if spec.ID == "" {
		spec.ID = NewJobID()
	}
	dir, err := dirFor(op, root, spec.ID)
	if err != nil {
		return "", err
	}
	specData, err := encodeSpec(op, dir, spec)
	if err != nil {
		return "", err
	}
	statusData, err := encodeStatus(op, dir, &JobStatus{State: Queued, Seq: 1})
	if err != nil {
		return "", err
	}
	o := newWriteOptions(nil)
	recs := []builtRecord{{SpecFile, specData, o.writeOnce(), createOnly}, {StatusFile, statusData, o, replaceTarget}}
	if err := createJob(op, dir, recs, false); err != nil {
		return "", err
	}
	return dir, nil
}

// Start takes job.lock in dir (ErrLocked if held), reads job.json and the
// last status, and writes running, durably, with started_at, this process's
// pid and host, and seq continuing from the last status (a job with no
// status.json starts at 1).
//
// A job with a cancel request (cancel.json) is not started: ErrCancelRequested,
// and if the job is not yet terminal it is marked cancelled, durably, by
// whichever of this Start and the canceller claimed the job's next attempt
// (see RequestCancel); a request published after Start's claim and check
// ends the Run's Context instead.
// A job in a terminal state (succeeded, failed, cancelled, lost) is not
// started again: ErrWrongState. A dir whose last element is
// not a job ID ("/", ".", "root/j/..", a dot-name) is ErrInvalid, Subject
// "job_id", before anything is touched. On any error the lock is released.
//
// Across hosts whose locks do not reach each other, job.lock alone cannot
// keep a job to one runner, so Start also claims the next attempt (status
// attempt N+1 over a record of attempt N; see "Many hosts" in
// docs/platforms.md): of any number of starters on any number of hosts one
// wins, the others get ErrLocked. A job whose status says running with a
// free lock is taken over only if its runner is judged gone: at once on the
// runner's own host (its pid), else once this process has seen the runner's
// lease unchanged for a whole lease (Start never waits: until then it is
// ErrLocked; call it again). A claim of attempt N+1 that no status names
// (its starter or canceller crashed between the claim and its first status
// write) is judged the same way, by the claimant's pid (named by the record
// it left in job.lock) or, with no such record, by the lease alone
// (WithLease's), and once its claimant is gone it is fenced and Start
// claims the attempt after it. A claim that passed an attempt its own
// runner ended, while the status this process reads still names an earlier
// attempt (a network filesystem client's cache lagging behind), reads the
// status again for up to 2 s, then gives up with ErrLocked, writing
// nothing. The Run renews its lease in the background and
// every write it makes is fenced: once another process has taken the job
// over, it fails with ErrNotOwner (see Run).
//
// Options: WithProgressInterval (default DefaultProgressInterval), WithLease
// (default DefaultLease), WithHost (default HostID()).
func Start(dir JobDir, opts ...StartOption) (*Run, error) {
	const op = "start"
	if err := checkJobDir(op, dir); err != nil {
		return nil, err
	}
	dir = dir.clean()
	o, err := newStartOptions(op, dir, opts)
	if err != nil {
		return nil, err
	}
	jd, err := openJobDir(op, dir)
	if err != nil {
		return nil, err
	}
	lk, err := lockJobIn(op, jd)
	if err != nil {
		defer jd.Close()
		if errors.Is(err, ErrLocked) {
			// A canceller holds job.lock while it cancels a queued job: a
			// request already published decides, not the lock.
			if p := findCancelIn(jd); p != nil {
				return nil, p.asError(op, dir, "the job was not started: "+err.Error(), "skip this job; submit a new job to run this work again")
			}
		}
		return nil, err
	}
	r, err := startLocked(op, jd, lk, o)
	if err != nil {
		_ = lk.Unlock() // the error that matters is err
		jd.Close()
		return nil, err
	}
	return r, nil
}

// startLocked is Start once it holds job.lock, in three steps: what the job is
// (readForStart), who may run it (claimForStart), and the run itself
// (begin).
func startLocked(op string, jd *fsys.Dir, lk *Lock, o startOptions) (*Run, error) {
	spec, last, err := readForStart(op, jd)
	if err != nil {
		return nil, err
	}
	c, last, err := claimForStart(op, jd, lk, last, o)
	if err != nil {
		return nil, refuseLost(op, jd, err)
	}
	return begin(op, jd, lk, spec, c, last, o)
}

// readForStart reads the job's spec and last status; a job in a terminal
// state is not started again (ErrCancelRequested if it has a request).
func readForStart(op string, jd *fsys.Dir) (JobSpec, *JobStatus, error) {
	dir := jobDir(jd)
	spec, err := readSpecIn(jd, newReadOptions(nil), specSchema())
	if err != nil {
		return JobSpec{}, nil, err
	}
	last, err := readStatusIn(jd, newReadOptions(nil), statusSchema())
	if err != nil {
		return JobSpec{}, nil, err
	}
	if last != nil && last.State.Terminal() {
		if p := findCancelIn(jd); p != nil {
			return JobSpec{}, nil, p.asError(op, dir, fmt.Sprintf("the job is already %s and is not started again", last.State),
				"submit a new job to run this work again")
		}
		return JobSpec{}, nil, terminalError(op, dir, last.State)
	}
	if due, why := dueAt(spec, last); due.After(Now()) {
		return JobSpec{}, nil, &Error{Op: op, Path: string(dir), Sentinel: ErrNotDue, Subject: why, Found: due,
			Msg:    fmt.Sprintf("the job may not start before %s (%s)", due.Format(time.RFC3339), why),
			Remedy: "start it then; StartNext and a Worker start it when it is due"}
	}
	return spec, last, nil
}

// begin makes the Run of claim c, unless the job has a cancel request (then
// it is cancelled, and not started), and writes running.
func begin(op string, jd *fsys.Dir, lk *Lock, spec JobSpec, c *attempt.Claim, last *JobStatus, o startOptions) (*Run, error) {
	dir := jobDir(jd)
	if err := refuseCancelled(op, jd, c, last); err != nil {
		return nil, err
	}
	r := &Run{dir: dir, jd: jd, spec: spec, lock: lk, progressState: progressState{interval: o.progressInterval}}
	if last != nil {
		r.st.Seq = last.Seq
	}
	// The renewer runs from here on; its events (a lease that lapsed while
	// this Start was slow) wait for running to be written, as they wait for
	// any write.
	unlock := r.lockWrite()
	r.ownedBy(c, o)
	if h := startSeam.Load(); h != nil {
		(*h)(string(dir))
	}
	now := Now()
	running := JobStatus{State: Running, StartedAt: &now, PID: os.Getpid(), Host: o.host,
		PIDScope: selfScope(), PIDStart: selfStart(), Lease: o.lease}
	if last != nil {
		running.Attempts = last.Attempts // what earlier attempts did stays with the job
	}
	err := r.writeNext(op, running, now)
	if err != nil {
		r.lock = nil // never started: a late event of the renewer finds nothing to do
	}
	unlock()
	if err != nil {
		r.own.ren.Stop()
		_ = c.Withdraw()
		return nil, err
	}
	return r, nil
}

// startSeam, when set (by tests only), runs in begin once the Run's lease
// renewer runs and before running is written (a slow Start).
var startSeam atomic.Pointer[func(dir string)]

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
// without touching the disk. At most one status write per progress interval
// (WithProgressInterval; default DefaultProgressInterval) carries the latest
// values, from a timer the Run owns: the latest fraction wins, the latest
// non-empty message wins, and seq grows by one per write, not per call. A
// value reported after a quiet interval is written at once (in the
// background); one reported within an interval of the last write is written
// when that interval ends, even if nothing else is called. So status.json
// never lags the latest report by more than one interval plus one write.
// Flush writes now; SetMessage, Finish and Close include what is pending in
// their own write. With an interval of 0, every call writes before it
// returns, as WriteStatus does.
//
// Progress writes are NoSync: atomic, but after a power cut status.json may
// show an earlier update.
//
// A background write that fails keeps its values pending (the next write
// carries them) and the next Progress call returns its error, wrapped; that
// call's own values are recorded all the same and a new write is tried an
// interval later. Flush, SetMessage, Finish and Close return the result of
// their own write, which carries what failed: nil means status.json holds
// everything reported.
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
	next.State, next.Message, next.Error, next.Remedy = o.State, finishMessage(r.jd, o.State, o.Message), o.Error, o.Remedy
	next.FinishedAt = &now
	next.ExitCode = nil
	if o.ExitCode != nil {
		code := *o.ExitCode
		next.ExitCode = &code
	}
	end := endOf(&next, o.State, now)
	if due, ok := retryDue(r.spec, &next, end, findCancelIn(r.jd) != nil, now); ok {
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
	if findCancelIn(r.jd) != nil {
		next.State, next.Message, next.FinishedAt = Cancelled, finishMessage(r.jd, Cancelled, why), &now
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
// Asked to stop: once cancel.json exists in the job directory (written by
// RequestCancel, `jobstore cancel`, or any tool that follows the file
// format), the context is done: on a local disk as soon as a file system
// event tells (the job directory is watched with inotify, kqueue or
// ReadDirectoryChangesW; BenchmarkCancelLatency measures it, milliseconds
// on a quiet Linux machine), and otherwise within a safety poll of about a
// second, for filesystems that deliver no event, such as NFS, SMB and FUSE
// mounts written by another host. The latency is not a promise: a loaded
// machine delays both. Its context.Cause is
// an *Error of kind ErrCancelRequested whose message names the requester,
// the time and the reason (if cancel.json cannot be read, it says so and
// unwraps to the read error). The runner should then stop and call
// Finish(Outcome{State: Cancelled}); nothing is written for it.
//
// The run ends: after a Finish that returned nil, or Close, the context is
// done with a cause that matches context.Canceled and says which (unless a
// cancel request ended it first: the first cause stands). A request that
// was already there when Context is first called ends it at once.
//
// The watch starts on the first call (later calls return the same context)
// and holds a goroutine until the run finishes or closes: always Close a
// Run. Where events are used it holds no OS watcher of its own: it shares
// the process's one with every Watch and every other Run (on Linux one
// inotify instance per process, however many runs and watches), through
// which it watches the job directory (one inotify watch per directory,
// shared with any Watch of the job, counted against
// fs.inotify.max_user_watches). If events cannot be had, the poll alone
// goes on.
func (r *Run) Context() context.Context {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ctx == nil {
		ended := r.endCause()
		r.ctx = newRunContext(r.dir, ended, cancelPollInterval)
		if t := r.spec.Timeout; t > 0 && ended == nil && r.st.StartedAt != nil {
			r.ctx.endAt(r.st.StartedAt.Add(t), errBecause("run", r.dir.StatusPath(), context.DeadlineExceeded,
				fmt.Sprintf("timed out: the attempt ran for its whole timeout of %v", t), "raise the job's timeout, or make its work faster"))
		}
	}
	return r.ctx.ctx
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
