package jobstore

import (
	"errors"
	"fmt"
	"math"
	"os"
	"sync"
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
// The job is built in a hidden directory of root (".submit-" + ID + "-" +
// digits, skipped by every scan), each record written and fsynced there
// and the directory fsynced, then renamed to the job's name without
// replacing anything (RENAME_NOREPLACE on Linux; MoveFileEx without
// REPLACE_EXISTING on Windows; elsewhere rename(2), which replaces only an
// empty directory), and root is fsynced. So a reader, List and Reconcile
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
	readOnly := o
	readOnly.perm &^= 0o222 // job.json: written once, then read-only
	recs := []builtRecord{{SpecFile, specData, readOnly, createOnly}, {StatusFile, statusData, o, replaceTarget}}
	if err := createJob(op, dir, recs, false); err != nil {
		return "", err
	}
	return dir, nil
}

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
	finished bool
	ctx      *runContext // Context, once asked for
	own      ownership   // fixed by Start
	written  fsys.ID     // status.json as this Run last wrote it (zero before its first write)
	lostErr  error       // ErrNotOwner once ownership is lost: sticky
	progressState
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
// started again: ErrInvalid, Subject "state". A dir whose last element is
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
// write) is judged the same way, by the claimant's pid or lease (by the
// lease alone, WithLease's, if the claim has no owner.json), and once its
// claimant is gone it is fenced and Start claims the attempt after it.
// The Run renews its lease in the background and
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
	o, err := newStartOptions(op, dir, opts)
	if err != nil {
		return nil, err
	}
	jd, err := openJobDir(op, dir)
	if err != nil {
		return nil, err
	}
	lk, err := lockJobIn(op, jd, dir)
	if err != nil {
		jd.Close()
		if errors.Is(err, ErrLocked) {
			// A canceller holds job.lock while it cancels a queued job: a
			// request already published decides, not the lock.
			if p := findCancel(dir); p != nil {
				return nil, p.asError(op, dir, "the job was not started: "+err.Error(), "skip this job; submit a new job to run this work again")
			}
		}
		return nil, err
	}
	r, err := start(op, jd, dir, lk, o)
	if err != nil {
		_ = lk.Unlock() // the error that matters is err
		jd.Close()
		return nil, err
	}
	return r, nil
}

// start is Start once it holds job.lock, in three steps: what the job is
// (readForStart), who may run it (claimForStart), and the run itself
// (begin).
func start(op string, jd *fsys.Dir, dir JobDir, lk *Lock, o startOptions) (*Run, error) {
	spec, last, err := readForStart(op, jd, dir)
	if err != nil {
		return nil, err
	}
	c, last, err := claimForStart(op, jd, dir, lk, last, o)
	if err != nil {
		return nil, refuseLost(op, dir, err)
	}
	return begin(op, jd, dir, lk, spec, c, last, o)
}

// readForStart reads the job's spec and last status; a job in a terminal
// state is not started again (ErrCancelRequested if it has a request).
func readForStart(op string, jd *fsys.Dir, dir JobDir) (JobSpec, *JobStatus, error) {
	spec, err := readSpecIn(jd, dir, newReadOptions(nil), specSchema())
	if err != nil {
		return JobSpec{}, nil, err
	}
	last, err := readStatusIn(jd, dir, newReadOptions(nil), statusSchema())
	if err != nil {
		return JobSpec{}, nil, err
	}
	if last != nil && last.State.Terminal() {
		if p := findCancel(dir); p != nil {
			return JobSpec{}, nil, p.asError(op, dir, fmt.Sprintf("the job is already %s and is not started again", last.State),
				"submit a new job to run this work again")
		}
		return JobSpec{}, nil, terminalError(op, dir, last.State)
	}
	return spec, last, nil
}

// begin makes the Run of claim c, unless the job has a cancel request (then
// it is cancelled, and not started), and writes running.
func begin(op string, jd *fsys.Dir, dir JobDir, lk *Lock, spec JobSpec, c *attempt.Claim, last *JobStatus, o startOptions) (*Run, error) {
	if err := refuseCancelled(op, dir, c, last); err != nil {
		return nil, err
	}
	r := &Run{dir: dir, jd: jd, spec: spec, lock: lk, progressState: progressState{interval: o.progressInterval}}
	if last != nil {
		r.st.Seq = last.Seq
	}
	r.ownedBy(c, o)
	now := Now()
	if err := r.write(op, JobStatus{State: Running, StartedAt: &now, PID: os.Getpid(), Host: o.host,
		PIDScope: selfScope(), PIDStart: selfStart(), Lease: o.lease}, now); err != nil {
		r.own.ren.Stop()
		_ = c.Withdraw()
		return nil, err
	}
	return r, nil
}

// write publishes next as the new status (seq and updated_at filled in) and,
// only if that worked, makes it the handle's status. Callers hold r.wmu and
// r.mu (or own r alone, as start does).
func (r *Run) write(op string, next JobStatus, now time.Time, opts ...WriteOption) error {
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
	next.SchemaVersion = StatusSchemaVersion
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
	case r.finished:
		return errInvalid(op, r.dir.StatusPath(), "state", string(r.st.State), nil,
			fmt.Sprintf("the job is finished (%s); its status is final", r.st.State),
			"do not update a job after Finish; submit a new job to run again")
	case r.lock == nil:
		return errInvalid(op, r.dir.StatusPath(), "run", nil, nil,
			"the run is closed and no longer holds job.lock", "write updates before Close")
	case r.lostErr != nil:
		return r.lostErr
	}
	return nil
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
	return r.write(op, next, Now(), NoSync())
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
	return r.wrote(r.write(op, next, Now()))
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
// SetMessage and Finish fail with ErrInvalid; a Finish that failed may be
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
		return errInvalid(op, r.dir.StatusPath(), "state", string(o.State), []State{Succeeded, Failed, Cancelled},
			fmt.Sprintf("%q is not a state a runner finishes in", o.State), "")
	}
	next := r.withPending()
	now := Now()
	next.State, next.Message, next.Error, next.Remedy = o.State, finishMessage(r.dir, o.State, o.Message), o.Error, o.Remedy
	next.FinishedAt = &now
	next.ExitCode = nil
	if o.ExitCode != nil {
		code := *o.ExitCode
		next.ExitCode = &code
	}
	if err := r.wrote(r.write(op, next, now)); err != nil {
		return err
	}
	r.finished = true
	r.endContext()
	return nil
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

// nextSeq returns the seq that follows seq. seq never wraps: at the largest
// value (2^64-1) the next update is refused with an *Error of kind
// ErrInvalid, Subject "seq", since a poller takes a smaller seq for an older
// record and would never show the update.
func nextSeq(op, path string, seq uint64) (uint64, error) {
	if seq == math.MaxUint64 {
		return 0, errInvalid(op, path, "seq", seq, fmt.Sprintf("a seq below %d to update from", uint64(math.MaxUint64)),
			fmt.Sprintf("is %d, the largest there is: the next update would wrap it to 0, and seq never goes back", seq),
			"this job's status cannot change any more; submit a new job")
	}
	return seq + 1, nil
}

// copyStatus copies st deeply, so that no pointer field is shared.
func copyStatus(st JobStatus) JobStatus {
	st.Progress = clonePtr(st.Progress)
	st.StartedAt = clonePtr(st.StartedAt)
	st.FinishedAt = clonePtr(st.FinishedAt)
	st.ExitCode = clonePtr(st.ExitCode)
	return st
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
