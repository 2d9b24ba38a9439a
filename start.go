package jobstore

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"sync/atomic"
	"time"

	"github.com/axqua/jobstore/internal/attempt"
	"github.com/axqua/jobstore/internal/fsys"
)

// Start takes job.lock in dir, claims the job's next attempt and writes
// running, durably, with started_at, this process's pid and host, and seq
// continuing from the last status (1 for a job with no status.json). Of any
// number of starters on any number of hosts one wins; the Run it returns
// renews its lease in the background, and once another process has taken
// the job over every write fails with ErrNotOwner (see Run).
//
// Errors (on any error the lock is released): ErrLocked if job.lock is
// held, another process claimed the attempt, or the job's runner or
// claimant is not yet judged gone (Start never waits: call it again);
// ErrCancelRequested for a job with a cancel request (marked cancelled,
// durably, if not yet terminal: see RequestCancel); ErrWrongState for a job
// in a terminal state; ErrNotDue before the job may
// start. A job whose status says running, its runner judged gone, is taken
// over: that attempt is recorded lost and counted, as Reconcile records
// it, and the job is started only if it is then due (ErrNotDue while its
// retry's backoff runs, ErrWrongState once it ended lost); ErrInvalid, Subject "job_id", for a dir whose last element is not
// a job ID ("/", ".", "root/j/..", a dot-name), before anything is touched.
//
// Options: WithProgressInterval (default DefaultProgressInterval), WithLease
// (default DefaultLease), WithHost (default HostID()). How a runner is
// judged gone and its job taken over: docs/mechanisms.md#start.
func Start(dir JobDir, opts ...StartOption) (*Run, error) {
	const op = "start"
	dir, o, jd, err := openToClaim(op, dir, opts)
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
// (begin). A claim that took over a runner judged gone first ends that
// runner's attempt as Reconcile does (markLost): lost, counted against
// MaxAttempts, and queued again after its backoff while attempts remain;
// then the job is looked at again, so that Start runs it only if it is due
// (else ErrNotDue, or ErrWrongState once it ended lost).
func startLocked(op string, jd *fsys.Dir, lk *Lock, o startOptions) (*Run, error) {
	for {
		spec, last, err := readForStart(op, jd, o.picked)
		if err != nil {
			return nil, err
		}
		c, last, gone, err := (&claimant{op, jd, lk, o.claimOptions}).forStart(last)
		if err != nil {
			return nil, lostRaceError(op, jd, err)
		}
		if last == nil || last.State != Running {
			return begin(op, jd, lk, spec, c, last, o)
		}
		if _, _, err := markLost(jobDir(jd), c, last, gone); err != nil {
			return nil, err
		}
	}
}

// readForStart reads the job's spec and last status; a job in a terminal
// state is not started again (ErrCancelRequested if it has a request), nor
// one whose kind is not one of picked, when StartNext picked it for its
// kinds (errNotCurrent).
func readForStart(op string, jd *fsys.Dir, picked []string) (JobSpec, *JobStatus, error) {
	dir := jobDir(jd)
	spec, err := readSpecIn(jd, newReadOptions(nil), specSchema())
	if err != nil {
		return JobSpec{}, nil, err
	}
	if len(picked) > 0 && !slices.Contains(picked, spec.Kind) {
		return JobSpec{}, nil, errNotCurrent
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
			Remedy: "start it then; a waiting worker starts it when it is due"}
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
	r.ownedBy(c, o.claimOptions)
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

// errNotCurrent is StartNext's verdict on a job that is not as its view
// read it: its directory changed since (the take's stat), or Start found
// it of a kind StartNext does not take (startOptions.picked). The job is
// passed over, not reported, and read again at the next look.
var errNotCurrent = errors.New("changed since read")

// startSeam, when set (by tests only), runs in begin once the Run's lease
// renewer runs and before running is written (a slow Start).
var startSeam atomic.Pointer[func(dir string)]

// lostRaceError is Start's answer when its claim failed with err. A claim
// lost in a race for the job's next attempt (lostClaim) on a job with a
// cancel request is ErrCancelRequested (the race was lost to the
// canceller, which writes cancelled, or to a runner, whose Context ends on
// the request), written by nobody here; any other err is returned as it
// is.
func lostRaceError(op string, jd *fsys.Dir, err error) error {
	dir := jobDir(jd)
	if !lostClaim(err) {
		return err
	}
	p := findCancelIn(jd)
	if p == nil {
		return err
	}
	return p.asError(op, dir, "the job was not started: "+err.Error(), "skip this job; submit a new job to run this work again")
}

// refuseCancelled is Start's check, made after it claimed the job's next
// attempt (c) and read the status again (last): a job with a cancel request
// is not started, and is marked cancelled now (it is not terminal: the
// claim would have failed).
func refuseCancelled(op string, jd *fsys.Dir, c *attempt.Claim, last *JobStatus) error {
	dir := jobDir(jd)
	p := findCancelIn(jd)
	if p == nil {
		return nil
	}
	when := "before it started"
	if last != nil && last.State == Running {
		when = "while its runner was gone" // Start takes over a dead runner's job
	}
	if err := writeCancelled(dir, c, last, "cancelled "+when+": "+p.String()); err != nil {
		return err
	}
	return p.asError(op, dir, "the job is now cancelled and is not started",
		"skip this job; submit a new job to run this work again")
}
