package jobstore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/axqua/jobstore/internal/attempt"
	"github.com/axqua/jobstore/internal/fsys"
	"github.com/axqua/jobstore/internal/proc"
)

// A Run's ownership of its job, across hosts. job.lock is the fast path
// where locks reach every process that uses the jobs root; where they do not
// (two hosts whose shared filesystem does not forward locks), the attempt
// decides (internal/attempt): Start claims attempt N+1 over a record of
// attempt N by creating .run-(N+1), renews a lease there, and writes every
// status through a temp file inside .run-(N+1), so that a fence stops its
// writes. See "Many hosts" in docs/platforms.md. This file turns the
// attempt layer's verdicts into the package's errors and decisions.

// ownership is a Run's claim; its fields change only under the Run's wmu
// (Start, a resumption, Close).
type ownership struct {
	claim *attempt.Claim
	ren   *attempt.Renewer
	host  string
	lease time.Duration
}

// ownerOf is what a judge knows of the runner that wrote st.
func ownerOf(st *JobStatus) *attempt.Owner {
	if st == nil {
		return nil
	}
	return &attempt.Owner{Host: st.Host, PID: st.PID, PIDScope: st.PIDScope, PIDStart: st.PIDStart, Lease: st.Lease}
}

// fencedBy names this process in a fence marker, for people.
func fencedBy() string {
	host, _ := HostID()
	return host + " pid " + strconv.Itoa(os.Getpid())
}

// judge is attempt.Judge with the package's errors.
func judge(op string, jd *fsys.Dir, dir JobDir, n uint64, owner *attempt.Owner, host string, fallback time.Duration) (attempt.Verdict, string, error) {
	v, why, err := attempt.Judge(jd, string(dir), n, owner, host, fallback)
	if err != nil {
		return 0, "", attemptError(op, dir, n, err, "cannot judge the attempt's owner")
	}
	return v, why, nil
}

// fence is attempt.Fence with the package's errors.
func fence(op string, jd *fsys.Dir, dir JobDir, n uint64) (bool, error) {
	won, err := attempt.Fence(jd, n, fencedBy())
	if err != nil {
		return false, attemptError(op, dir, n, err, "cannot end the attempt (rename to "+attempt.FencedName(n)+")")
	}
	return won, nil
}

// attemptError names a failure of the attempt layer: a link or special file
// where an attempt directory or its lease should be is ErrNotRegular, a
// stale handle that outlasted the retries is ErrIO, anything else a step
// error of op.
func attemptError(op string, dir JobDir, n uint64, err error, msg string) error {
	path := filepath.Join(string(dir), attempt.RunName(n))
	var nr *fsys.NotRegularError
	switch {
	case errors.As(err, &nr):
		return irregular(op, path, nr)
	case fsys.IsTransientRead(err):
		return errIO(op, path, unwrapPath(err), msg+": the filesystem kept reporting a stale handle",
			"the shared filesystem lost track of the directory; try again")
	}
	return stepError(op, path, unwrapPath(err), msg, "")
}

// claimForStart decides whether this process may run the job whose last
// status is last, and claims the next attempt for it, in the job directory
// jd. The caller holds job.lock, so an earlier runner on this host is gone;
// one on another host is judged by its attempt: alive or not yet judged is
// ErrLocked (Start never waits for a lease), gone or over is taken over only
// by the one process that wins its fence. After the claim the status is
// read again (and returned): a job that became terminal (ErrInvalid) or was
// claimed by a later attempt meanwhile (ErrLocked) is left, and the claim
// withdrawn.
//
// lk is the caller's job.lock: a holder that died holding it left its record
// there, which names the claimant of a claim that no status names (see
// passStaleClaims).
func claimForStart(op string, jd *fsys.Dir, dir JobDir, lk *Lock, last *JobStatus, o startOptions) (*attempt.Claim, *JobStatus, error) {
	var a uint64
	if last != nil {
		a = last.Attempt
	}
	if last != nil && last.State == Running && a > 0 {
		v, why, err := judge(op, jd, dir, a, ownerOf(last), o.host, o.lease)
		if err != nil {
			return nil, nil, err
		}
		switch v {
		case attempt.Alive, attempt.Undecided:
			return nil, nil, errLocked(op, runPath(dir, a), "attempt "+strconv.FormatUint(a, 10)+"'s runner may be alive on another host: "+why)
		case attempt.Gone, attempt.Over:
			won, err := fence(op, jd, dir, a)
			if err != nil {
				return nil, nil, err
			}
			if !won {
				return nil, nil, errLocked(op, fencedPath(dir, a), "another process took attempt "+strconv.FormatUint(a, 10)+" over")
			}
		}
		// attempt.NoClaim: a runner without attempts; job.lock decided.
	}
	// The common case first: attempt a+1 is free (its mkdir is the test).
	// Only if it is claimed or over are the claims after a judged.
	var taken uint64
	c, err := take(op, jd, dir, a+1)
	if errors.Is(err, ErrLocked) {
		var next uint64
		if next, taken, _, err = passStaleClaims(op, jd, dir, lk, a, o.host, o.lease); err != nil {
			return nil, nil, err
		}
		c, err = take(op, jd, dir, next)
	}
	if err != nil {
		return nil, nil, err
	}
	// A Remove renames a finished job's directory away before it deletes it:
	// a claim made in it after that (this process read the job before the
	// removal began) is in a directory that is no job any more.
	if moved, merr := movedAway(jd, dir); merr != nil || moved {
		_ = c.Withdraw()
		if merr != nil {
			return nil, nil, stepError(op, string(dir), unwrapPath(merr), "cannot look at the job directory after the claim", "")
		}
		return nil, nil, errRemovedMeanwhile(op, dir)
	}
	// A write of the runner of attempt a (or of a stale claimant this
	// process fenced) that resolved its .run directory before the fence may
	// have landed since last was read: continue from it. Anything else that
	// changed the status means someone else owns the job now.
	now, err := readStatusIn(jd, dir, newReadOptions(nil), statusSchema())
	switch {
	case err != nil || now == nil:
	case now.State.Terminal():
		err = terminalError(op, dir, now.State)
	case now.Attempt > max(a, taken):
		err = errLocked(op, dir.StatusPath(), fmt.Sprintf("attempt %d claimed the job meanwhile", now.Attempt))
	}
	if err != nil {
		_ = c.Withdraw()
		return nil, nil, err
	}
	return c, now, nil
}

// take claims attempt n of the job: an attempt claimed by another process,
// or over, is ErrLocked naming it.
func take(op string, jd *fsys.Dir, dir JobDir, n uint64) (*attempt.Claim, error) {
	c, err := attempt.Take(jd, n)
	switch {
	case err == nil:
		return c, nil
	case errors.Is(err, attempt.ErrTaken):
		return nil, errClaimTaken(op, runPath(dir, n), "attempt "+strconv.FormatUint(n, 10)+" is claimed by another process",
			"another runner owns this attempt; read the status again and wait for it to finish or be judged gone")
	case errors.Is(err, attempt.ErrOver):
		return nil, errClaimTaken(op, runPath(dir, n), "attempt "+strconv.FormatUint(n, 10)+" is over ("+attempt.FencedName(n)+" exists)",
			"read the status again: another runner ran or took over this attempt")
	case errors.Is(err, fs.ErrNotExist):
		return nil, errNotJob(op, dir)
	}
	return nil, attemptError(op, dir, n, err, "cannot claim the attempt")
}

// passStaleClaims finds the attempt to claim after a status of attempt a,
// clearing the way past claims that no status names: a claimant of a+1
// (a starter or a canceller) that crashed between its mkdir and its first
// status write leaves .run-(a+1) on a job still at attempt a, and would
// block the job for good. Each such claimant is judged as a running owner
// is, by the owner that job.lock names (lk's previous holder: every
// claimant holds job.lock from before its mkdir, and one that dies holding
// it leaves its record there): on its host at once, by its pid and start
// token; elsewhere, or with no record, by its lease, watched for a whole
// fallback lease, since a live claimant writes its first status, or its
// first lease, within a third of one. A gone one is fenced, and only the
// process that wins its fence passes it (taken is the last attempt it won,
// 0 if none); an attempt already over (.fenced-n without .run-n) is passed
// by anyone. Fencing is what makes a wrong verdict safe (a record left by
// another crash, a claimant on a host whose locks do not reach this one): a
// fenced claimant can no longer write anything, and its Start fails.
func passStaleClaims(op string, jd *fsys.Dir, dir JobDir, lk *Lock, a uint64, host string, fallback time.Duration) (next, taken uint64, undecided bool, err error) {
	var claimant *attempt.Owner
	if p := lk.prev; p != nil {
		claimant = &attempt.Owner{Host: p.Host, PID: p.PID, PIDScope: p.PIDScope, PIDStart: p.PIDStart}
	}
	for n := a + 1; ; n++ {
		v, why, err := judge(op, jd, dir, n, claimant, host, fallback)
		if err != nil {
			return 0, 0, false, err
		}
		switch v {
		case attempt.NoClaim:
			return n, taken, false, nil
		case attempt.Over:
			continue
		case attempt.Alive, attempt.Undecided:
			return 0, 0, v == attempt.Undecided, errLocked(op, runPath(dir, n), "attempt "+strconv.FormatUint(n, 10)+
				" is claimed, and its claimant, which has not written a status yet, may be alive: "+why)
		}
		won, err := fence(op, jd, dir, n)
		if err != nil {
			return 0, 0, false, err
		}
		if !won {
			return 0, 0, false, errLocked(op, fencedPath(dir, n), "another process took attempt "+strconv.FormatUint(n, 10)+" over")
		}
		taken = n
	}
}

// terminalError: a job in a terminal state is not started again.
func terminalError(op string, dir JobDir, state State) error {
	return errInvalid(op, dir.StatusPath(), "state", string(state), []State{Queued, Running},
		fmt.Sprintf("the job is already %s; a finished job is not started again", state), "submit a new job")
}

func runPath(dir JobDir, n uint64) string { return filepath.Join(string(dir), attempt.RunName(n)) }
func fencedPath(dir JobDir, n uint64) string {
	return filepath.Join(string(dir), attempt.FencedName(n))
}

// endClaim ends a claim whose attempt is over (.run-N becomes .fenced-N), so
// that no claimant can revive it.
func endClaim(op string, dir JobDir, c *attempt.Claim) error {
	if err := c.End(); err != nil {
		return stepError(op, runPath(dir, c.N()), unwrapPath(err), "cannot end the attempt (rename to "+attempt.FencedName(c.N())+")",
			"nothing to do: the attempt's lease is no longer renewed, so it is judged gone after a lease")
	}
	return nil
}

// ownedBy makes r the owner of claim c: the lease renewer starts, and its
// events (the claim fenced, the lease lapsed) come back to r.
func (r *Run) ownedBy(c *attempt.Claim, o startOptions) {
	r.own = ownership{claim: c, host: o.host, lease: o.lease}
	r.own.ren = r.renew(c)
}

// renew starts the renewer of c for r.
func (r *Run) renew(c *attempt.Claim) *attempt.Renewer {
	var ren *attempt.Renewer
	ren = attempt.StartRenewer(c, r.own.lease, func(err error) { r.leaseEvent(ren, err) })
	return ren
}

// leaseEvent is the renewer ren's word from the background: the claim was
// fenced (the Run lost its job: ErrNotOwner, sticky, ends its Context), or
// the lease lapsed by this process's clock (a pause): the Run re-establishes
// its claim at once, as a write would, so that an idle runner that wakes up
// keeps its job. A Run that moved on to another renewer, finished or
// closed meanwhile has nothing to do.
func (r *Run) leaseEvent(ren *attempt.Renewer, err error) {
	defer r.lockWrite()()
	if r.own.ren != ren || r.lock == nil || r.finished || r.lostErr != nil {
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
			return errNotOwner(op, runPath(r.dir, old.N()), old.N(), fmt.Sprintf(
				"attempt %d was taken over while this runner was paused (its lease, %v, was last renewed %v ago): another process judged it gone; nothing was written",
				old.N(), r.own.lease, age.Round(time.Millisecond)), nil)
		}
		return errNotOwner(op, runPath(r.dir, old.N()), old.N(), fmt.Sprintf(
			"attempt %d's lease lapsed while this runner was paused (last renewed %v ago), and the claim could not be established again: %v",
			old.N(), age.Round(time.Millisecond), err), nil)
	}
	r.own.claim = c
	r.own.ren = r.renew(c)
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
	if st, rerr := readStatusIn(r.jd, r.dir, newReadOptions(nil), statusSchema()); rerr == nil && st != nil {
		now = fmt.Sprintf("it now says %s, seq %d (this run wrote seq %d)", st.State, st.Seq, r.st.Seq)
	}
	n := r.own.claim.N()
	return errNotOwner(op, r.dir.StatusPath(), n, "status.json was replaced by a write that is not this run's: "+now+
		"; this run no longer owns the job and wrote nothing", nil)
}

// notOwner is ErrNotOwner for r's attempt, found fenced by op.
func (r *Run) notOwner(op string, cause error) error {
	n := r.own.claim.N()
	return errNotOwner(op, runPath(r.dir, n), n, "attempt "+strconv.FormatUint(n, 10)+
		" was taken over: another process judged this runner gone, and its claim is now "+attempt.FencedName(n)+
		"; nothing was written ("+rootCause(cause).Error()+")", nil)
}

// fenceError is ownerWriteError for r's writes.
func (r *Run) fenceError(op string, n uint64, err error) error {
	return ownerWriteError(op, r.dir, n, err)
}

// ownerWriteError turns a failed write of attempt n's owner into
// ErrNotOwner when the reason is that .run-n is gone, or names another
// directory than the one claimed (attempt.ErrFenced, ENOENT or ENOTDIR at
// the create or the rename) while the job directory is there. Nothing but
// a fence (or the owner's own release) removes .run-n, so that is the only
// cause. .run-n is not looked up again to confirm: through a cached view (a
// FUSE or NFS client's dentry and attribute caches) it may still appear to
// exist while every operation inside it fails at the server. ErrNotJob when
// the job directory itself is gone.
func ownerWriteError(op string, dir JobDir, n uint64, err error) error {
	if err == nil || (!errors.Is(err, fs.ErrNotExist) && !fsys.IsNotDir(err) && !errors.Is(err, attempt.ErrFenced)) {
		return err
	}
	if _, serr := os.Stat(dir.SpecPath()); errors.Is(serr, fs.ErrNotExist) {
		return errNotJob(op, dir)
	}
	return errNotOwner(op, runPath(dir, n), n, "attempt "+strconv.FormatUint(n, 10)+
		" was taken over: another process judged this runner gone, and its claim is now "+attempt.FencedName(n)+
		"; nothing was written ("+rootCause(err).Error()+")", nil)
}

// noteLost makes an ErrNotOwner sticky and ends the Run's Context with it.
// Callers hold r.mu.
func (r *Run) noteLost(err error) {
	if r.lostErr != nil || !errors.Is(err, ErrNotOwner) {
		return
	}
	r.lostErr = err
	if r.ctx != nil {
		r.ctx.end(err)
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

// rootCause is the innermost error of a chain of single wraps.
func rootCause(err error) error {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err
		}
		err = next
	}
}

// selfScope and selfStart are what a Run records of its own process, so
// that a judge on the same host can tell whether it is alive.
func selfScope() string { return proc.Scope() }
func selfStart() string { return proc.SelfStart() }
