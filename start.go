package jobstore

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/axqua/jobstore/internal/attempt"
	"github.com/axqua/jobstore/internal/fsys"
)

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
