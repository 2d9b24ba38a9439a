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

// bulkyMessage is the message length above which Progress encodes the
// record it would write, to refuse one over DefaultMaxSize at the call (as
// an uncoalesced write would) rather than from a background write. A
// shorter message can push the record over only when the other fields
// already fill nearly all of DefaultMaxSize; that record is refused by the
// background write, and the next call returns the error.
const bulkyMessage = 64 << 10

// progressState is the Run's coalescing of Progress calls. Its fields are
// guarded by Run.mu; interval is fixed by Start.
type progressState struct {
	interval  time.Duration
	pending   pendingProgress
	lastWrite time.Time   // when the last write began (monotonic): the rate limit counts from it
	timer     *time.Timer // created on first use; runs flushDue
	armed     bool        // timer is set to run flushDue
	bgErr     error       // a failed background write, for the next Progress
}

// pendingProgress is what Progress recorded and no write has carried yet.
type pendingProgress struct {
	set      bool
	fraction float64
	message  string // "" keeps the message
}

// merge lays newer on top of p: the newer fraction, the newer message
// unless it is empty.
func (p pendingProgress) merge(newer pendingProgress) pendingProgress {
	if !newer.set {
		return p
	}
	if newer.message == "" {
		newer.message = p.message
	}
	return newer
}

// recordProgress notes a validated Progress call and makes sure a write
// will carry it. Callers hold r.mu.
func (r *Run) recordProgress(fraction float64, message string) error {
	if _, err := nextSeq("progress", r.dir.StatusPath(), r.st.Seq); err != nil {
		return err // no write could carry it: refused now, not in the background
	}
	p := r.pending.merge(pendingProgress{set: true, fraction: fraction, message: message})
	if len(message) > bulkyMessage { // refused now, as an uncoalesced write would be
		if _, err := marshalRecord(r.apply(p)); err != nil {
			return withPath(err, "progress", r.dir.StatusPath())
		}
	}
	r.pending = p
	if !r.armed {
		r.arm(r.untilDue(time.Now()))
	}
	if err := r.bgErr; err != nil {
		r.bgErr = nil
		return errBecause("progress", r.dir.StatusPath(), err,
			"a background progress write failed; status.json shows an earlier update",
			"the latest values are kept and written again within the progress interval; Flush to retry now")
	}
	return nil
}

// untilDue is how long the rate limit lets the next write wait.
func (r *Run) untilDue(now time.Time) time.Duration {
	return max(0, r.lastWrite.Add(r.interval).Sub(now))
}

// arm makes the timer run flushDue after d. Callers hold r.mu.
func (r *Run) arm(d time.Duration) {
	r.armed = true
	if r.timer == nil {
		r.timer = time.AfterFunc(d, r.flushDue)
		return
	}
	r.timer.Reset(d)
}

// disarm stops the timer. A flushDue already started finds nothing to do
// or not yet due, and returns. Callers hold r.mu.
func (r *Run) disarm() {
	r.armed = false
	if r.timer != nil {
		r.timer.Stop()
	}
}

// flushDue is the timer's work: write what is pending, if the interval has
// passed since the last write (else wait for it). It holds r.mu only around
// the bookkeeping, never during the write, so Progress does not wait for
// the disk.
func (r *Run) flushDue() {
	r.wmu.Lock()
	defer r.wmu.Unlock()
	r.mu.Lock()
	if !r.pending.set || r.usable("progress") != nil {
		r.armed = false
		r.mu.Unlock()
		return
	}
	now := time.Now()
	if d := r.untilDue(now); d > 0 { // a write came in between (Flush, SetMessage)
		r.arm(d)
		r.mu.Unlock()
		return
	}
	r.armed = false
	if err := r.ensureOwner(); err != nil { // a lapsed lease is re-established before the write
		r.bgErr = err
		r.noteLost(err)
		r.mu.Unlock()
		return
	}
	taken := r.pending
	r.pending = pendingProgress{}
	next, err := r.stamp("progress", r.apply(taken), Now())
	r.lastWrite = now
	r.mu.Unlock()

	if err == nil { // r.wmu is held: no other write can take this seq meanwhile
		err = r.put(next, NoSync())
	}

	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.pending = taken.merge(r.pending)
		r.bgErr = err
		r.noteLost(err)
		return
	}
	r.st = next
}

// apply returns a copy of the handle's status with p laid on it.
func (r *Run) apply(p pendingProgress) JobStatus {
	next := copyStatus(r.st)
	if p.set {
		f := p.fraction
		next.Progress = &f
		if p.message != "" {
			next.Message = p.message
		}
	}
	return next
}

// withPending is the handle's status with the pending progress laid on it,
// for a write that carries it. Callers hold r.wmu and r.mu.
func (r *Run) withPending() JobStatus { return r.apply(r.pending) }

// wrote settles the pending progress after a write that carried it: on
// success it is written and any background failure repaired; either way the
// caller reports err, so a background error is not reported again.
func (r *Run) wrote(err error) error {
	r.bgErr = nil
	if err != nil {
		return err
	}
	r.pending = pendingProgress{}
	r.disarm()
	return nil
}

// closeProgress writes what is pending, if the run can still write, and
// stops the timer for good. Callers (Close) hold r.wmu and r.mu.
func (r *Run) closeProgress() error {
	var err error
	if r.pending.set && r.usable("close") == nil {
		err = r.wrote(r.writeNext("close", r.withPending(), Now(), NoSync()))
	}
	r.bgErr = nil
	r.disarm()
	return err
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
	finished bool        // Finish (or interrupt) wrote the attempt's last record
	requeued bool        // and that record put the job back in the queue
	ctx      *runContext // Context, once asked for
	own      ownership   // fixed by Start
	written  fsys.ID     // status.json as this Run last wrote it (zero before its first write)
	lostErr  error       // ErrNotOwner once ownership is lost: sticky
	progressState
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

// ownership is a Run's claim; its fields change only under the Run's wmu
// (Start, a resumption, Close).
type ownership struct {
	claim *attempt.Claim
	ren   *attempt.Renewer
	host  string
	lease time.Duration
}

// ownedBy makes r the owner of claim c: the lease renewer starts, and its
// events (the claim fenced, the lease lapsed) come back to r. Callers hold
// r.wmu and r.mu.
func (r *Run) ownedBy(c *attempt.Claim, o startOptions) {
	r.own = ownership{claim: c, host: o.host, lease: o.lease}
	r.own.ren = r.renew(c)
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

// renew starts the renewer of c for r; its events name c, the claim the
// Run owned when it started (each claim has one renewer).
func (r *Run) renew(c *attempt.Claim) *attempt.Renewer {
	return attempt.StartRenewer(c, r.own.lease, func(err error) { r.leaseEvent(c, err) })
}

// leaseEvent is the word of the renewer of claim c from the background:
// the claim was fenced (the Run lost its job: ErrNotOwner, sticky, ends its
// Context), or the lease lapsed by this process's clock (a pause): the Run
// re-establishes its claim at once, as a write would, so that an idle
// runner that wakes up keeps its job. A Run that moved on to another claim,
// finished or closed meanwhile has nothing to do.
func (r *Run) leaseEvent(c *attempt.Claim, err error) {
	defer r.lockWrite()()
	if r.own.claim != c || r.lock == nil || r.finished || r.lostErr != nil {
		return
	}
	if errors.Is(err, attempt.ErrFenced) {
		r.noteLost(r.notOwner("renew lease", err))
		return
	}
	r.noteLost(r.ensureOwner())
}

// ensureOwner checks, before a write, that r still owns its job: an
// attempt found fenced is ErrNotOwner; a lease that lapsed by this process's
// clock (the process was paused: SIGSTOP, a debugger, a laptop's sleep) is
// re-established first (resume). Callers hold r.wmu and r.mu.
func (r *Run) ensureOwner() error {
	switch err := r.own.ren.Check(time.Now()); {
	case err == nil:
		return nil
	case errors.Is(err, attempt.ErrLapsed):
		return r.resume()
	default:
		return r.notOwner("check lease", err)
	}
}

// resume re-establishes r's claim after its lease lapsed, with operations
// atomic at the server (attempt.Claim.Resume): it fences its own attempt N
// and, having won, claims N+1, then writes its status naming N+1, durably,
// so that the record points at the live claim. A process on another host
// that judged the runner gone and fenced N first wins instead: ErrNotOwner,
// and nothing is written. Callers hold r.wmu and r.mu.
func (r *Run) resume() error {
	const op = "resume"
	old := r.own.claim
	r.own.ren.Stop()
	age := r.own.ren.Age(time.Now())
	c, err := old.Resume(fencedBy())
	if err != nil {
		if errors.Is(err, attempt.ErrFenced) {
			return errNotOwner(op, runPath(r.dir, old.N()), old.N(), nil, fmt.Sprintf(
				"attempt %d was taken over while this runner was paused (its lease, %v, was last renewed %v ago): another process judged it gone; nothing was written",
				old.N(), r.own.lease, age.Round(time.Millisecond)))
		}
		return errNotOwner(op, runPath(r.dir, old.N()), old.N(), nil, fmt.Sprintf(
			"attempt %d's lease lapsed while this runner was paused (last renewed %v ago), and the claim could not be established again: %v",
			old.N(), age.Round(time.Millisecond), err))
	}
	r.own.claim = c
	r.own.ren = r.renew(c)
	if r.st.State == "" {
		return nil // Start's first write, about to be made, names the new claim
	}
	next, err := r.stamp(op, copyStatus(r.st), Now())
	if err == nil {
		err = r.put(next)
	}
	if err != nil {
		return err
	}
	r.st = next
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

// release ends the Run's ownership at Close: the renewer stops and, for a
// job closed without Finish, .run-N becomes .fenced-N, without a fence
// marker, so that a reconciler can still take over (mark lost) the job and
// no claimant can revive the attempt. A finished job's .run-N stays as it
// is: its status is terminal, so no process judges its attempt or claims
// another, and the rename would cost every job a directory operation. A
// Run that lost ownership has nothing to release. Callers hold r.wmu only
// (the renewer's events take r.mu).
func (r *Run) release(lost, finished bool) error {
	if r.own.ren == nil {
		return nil
	}
	r.own.ren.Stop()
	if lost || finished {
		return r.own.claim.Close()
	}
	return endClaim("release", r.dir, r.own.claim)
}

// runContext is a Run's Context and the watch that ends it when a cancel
// request appears.
type runContext struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	watch  *fsevents.Await // nil when the context ended before it was needed
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
	rc.watch = fsevents.StartAwait(string(dir), CancelFile, poll, true, func() {
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
	if rc.watch != nil {
		rc.watch.Stop()
	}
	if rc.timer != nil {
		rc.timer.Stop()
	}
}
