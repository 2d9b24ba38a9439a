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
)

// The claim protocol: who may act on a job, across hosts. job.lock is the
// fast path where locks reach every process that uses the jobs root; where
// they do not (two hosts whose shared filesystem does not forward locks),
// the attempt decides (internal/attempt): Start, a canceller, Reconcile,
// Remove and Retry claim attempt N+1 over a record of attempt N by creating
// .run-(N+1), judging and fencing first a runner or claimant that is gone.
// A Run then renews a lease there (lease.go) and writes every status through
// a temp file inside .run-(N+1), so that a fence stops its writes. See "Many
// hosts" in docs/platforms.md. This file turns the attempt layer's verdicts
// into the package's errors and decisions.

// ownerOf is what a judge knows of the runner that wrote st.
func ownerOf(st *JobStatus) *attempt.Owner {
	if st == nil {
		return nil
	}
	return &attempt.Owner{Host: st.Host, PID: st.PID, PIDScope: st.PIDScope, PIDStart: st.PIDStart, Lease: st.Lease}
}

// fencedBy names this process in a fence marker, for people. The marker
// decides nothing by its text, so a host that cannot be named is said to
// be unknown rather than failing the fence.
func fencedBy() string {
	host, err := HostID()
	if err != nil {
		host = "(host unknown: " + err.Error() + ")"
	}
	return host + " pid " + strconv.Itoa(os.Getpid())
}

// judge is attempt.Judge with the package's errors.
func judge(op string, jd *fsys.Dir, n uint64, owner *attempt.Owner, host string, fallback time.Duration) (attempt.Verdict, string, error) {
	dir := jobDir(jd)
	v, why, err := attempt.Judge(jd, string(dir), n, owner, host, fallback)
	if err != nil {
		return 0, "", attemptError(op, dir, n, err, "cannot judge the attempt's owner")
	}
	return v, why, nil
}

// fence is attempt.Fence with the package's errors.
func fence(op string, jd *fsys.Dir, n uint64) (bool, error) {
	dir := jobDir(jd)
	won, err := attempt.Fence(jd, n, fencedBy())
	if err != nil {
		return false, attemptError(op, dir, n, err, "cannot end the attempt (rename to "+attempt.FencedName(n)+")")
	}
	return won, nil
}

// heldBy says who holds attempt n (who: "its runner", ...; owner as its
// record names it, nil if none does) and how this process judged it (v,
// Alive or Undecided, for the reason why), naming the owner's host, which
// is this one (host) or another.
func heldBy(n uint64, who string, owner *attempt.Owner, host string, v attempt.Verdict, why string) string {
	holder := "a process that recorded neither its host nor its pid"
	if owner != nil && (owner.Host != "" || owner.PID != 0) {
		on := "an unrecorded host"
		switch {
		case owner.Host == host:
			on = "this host (" + owner.Host + ")"
		case owner.Host != "":
			on = "host " + owner.Host
		}
		holder = "pid " + strconv.Itoa(owner.PID) + " on " + on
		if owner.PID == 0 {
			holder = "a process of unrecorded pid on " + on
		}
	}
	judged := "judged alive"
	if v == attempt.Undecided {
		judged = "not yet judged (it may be alive)"
	}
	return fmt.Sprintf("attempt %d is held by %s, %s, %s: %s", n, who, holder, judged, why)
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

// openToClaim is how every operation that claims a job's next attempt
// (Start, Remove, a canceller) begins: dir is checked (a last element
// that is not a job ID is ErrInvalid, Subject "job_id", before anything
// is touched) and cleaned, the options of the claim read, and the job
// directory opened. It returns the cleaned dir.
func openToClaim(op string, dir JobDir, opts []StartOption) (JobDir, startOptions, *fsys.Dir, error) {
	if err := checkJobDir(op, dir); err != nil {
		return dir, startOptions{}, nil, err
	}
	dir = dir.clean()
	o, err := newStartOptions(op, dir, opts)
	if err != nil {
		return dir, o, nil, err
	}
	jd, err := openJobDir(op, dir)
	return dir, o, jd, err
}

// claimForStart decides whether this process may run the job whose last
// status is last, and claims the next attempt for it, in the job directory
// jd. The caller holds job.lock, so an earlier runner on this host is gone;
// one on another host is judged by its attempt: alive or not yet judged is
// ErrLocked (Start never waits for a lease), gone or over is taken over
// (takeOver). It returns the claim and the status read once it is held;
// when that status still says running, the claim took over its runner,
// judged gone for the reason gone, and the caller must end that attempt
// (markLost) before anything else.
func claimForStart(op string, jd *fsys.Dir, lk *Lock, last *JobStatus, o claimOptions) (c *attempt.Claim, now *JobStatus, gone string, err error) {
	dir := jobDir(jd)
	endsAttempt := false
	gone = "job.lock was free while the status said running"
	if last != nil && last.State == Running && last.Attempt > 0 {
		a := last.Attempt
		v, why, err := judge(op, jd, a, ownerOf(last), o.host, o.lease)
		if err != nil {
			return nil, nil, "", err
		}
		switch v {
		case attempt.Alive, attempt.Undecided:
			return nil, nil, "", errLocked(op, runPath(dir, a), heldBy(a, "its runner", ownerOf(last), o.host, v, why))
		case attempt.Gone, attempt.Over:
			endsAttempt = true
			gone = "attempt " + strconv.FormatUint(a, 10) + ": " + why
		}
		// attempt.NoClaim: a runner without attempts; job.lock decided.
	}
	c, now, err = takeOver(op, jd, lk, last, endsAttempt, o)
	if err == nil && now != nil && now.State == Running && last != nil && now.Attempt != last.Attempt {
		gone = "attempt " + strconv.FormatUint(now.Attempt, 10) + ": its claimant was judged gone and fenced"
	}
	return c, now, gone, err
}

// takeOver claims the attempt after last's (nil: no status) for this
// process, the caller holding job.lock. With endsAttempt (last is running,
// and its runner was judged gone, or its attempt a is over), attempt a is
// fenced first. Whoever wins that fence goes on to claim a+1; a process
// that loses it goes on too, and finds the winner's claim of a+1 (judged
// as any claim that no status names, see passStaleClaims: a winner that
// died before its first write is fenced in turn) or, if the winner has not
// claimed a+1 yet, claims a+1 itself, which the winner's claim then finds
// taken: of any number of processes one claims the attempt, whoever won
// the fence, and a winner that died never blocks the job. After the claim
// the status is read again (and returned; rereadStatus waits for a record
// of an attempt the claim passed, if its owner ended it): a job that became
// terminal (ErrWrongState) or was claimed by a later attempt meanwhile
// (ErrLocked) is left, and the claim withdrawn.
//
// lk is the caller's job.lock: a holder that died holding it left its record
// there, which names the claimant of a claim that no status names (see
// passStaleClaims).
func takeOver(op string, jd *fsys.Dir, lk *Lock, last *JobStatus, endsAttempt bool, o claimOptions) (*attempt.Claim, *JobStatus, error) {
	dir := jobDir(jd)
	var a uint64
	if last != nil {
		a = last.Attempt
	}
	if endsAttempt {
		won, err := fence(op, jd, a)
		if err != nil {
			return nil, nil, err
		}
		if !won {
			// Another process won: if its first record has landed, the job is
			// its own now.
			now, err := readStatusIn(jd, newReadOptions(nil), statusSchema())
			switch {
			case err != nil:
				return nil, nil, err
			case now != nil && now.State.Terminal():
				return nil, nil, terminalError(op, dir, now.State)
			case now != nil && now.Attempt > a:
				return nil, nil, errLocked(op, fencedPath(dir, a), "another process took attempt "+strconv.FormatUint(a, 10)+
					" over, and runs the job as attempt "+strconv.FormatUint(now.Attempt, 10))
			}
		}
	}
	c, p, err := claimAfter(op, jd, lk, a, o)
	if err != nil {
		return nil, nil, err
	}
	// A Remove renames a finished job's directory away before it deletes it:
	// a claim made in it after that (this process read the job before the
	// removal began) is in a directory that is no job any more.
	if moved, merr := movedAway(jd); merr != nil || moved {
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
	now, err := rereadStatus(op, jd, p.ended)
	switch {
	case err != nil || now == nil:
	case now.State.Terminal():
		err = terminalError(op, dir, now.State)
	case now.Attempt > max(a, p.taken):
		err = errLocked(op, dir.StatusPath(), fmt.Sprintf("attempt %d claimed the job meanwhile", now.Attempt))
	}
	if err != nil {
		_ = c.Withdraw()
		return nil, nil, err
	}
	return c, now, nil
}

// claimAfter claims the first attempt after a that can be claimed. The
// common case first: attempt a+1 is free (its mkdir is the test). Only if
// it is claimed or over are the claims after a judged and passed
// (passStaleClaims, whose account of them is returned).
func claimAfter(op string, jd *fsys.Dir, lk *Lock, a uint64, o claimOptions) (*attempt.Claim, passed, error) {
	c, err := takeAttempt(op, jd, a+1)
	if !errors.Is(err, ErrLocked) {
		return c, passed{}, err
	}
	p, err := passStaleClaims(op, jd, lk, a, o.host, o.lease)
	if err != nil {
		return nil, p, err
	}
	c, err = takeAttempt(op, jd, p.next)
	return c, p, err
}

// takeAttempt claims attempt n of the job: an attempt claimed by another process,
// or over, is ErrLocked naming it.
func takeAttempt(op string, jd *fsys.Dir, n uint64) (*attempt.Claim, error) {
	dir := jobDir(jd)
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

// How long, and how often, rereadStatus reads a record that is older than
// an attempt its owner ended: a network filesystem client's caches keep
// what they fetched for a while (GlusterFS: about 1 s).
const (
	staleViewBudget = 2 * time.Second
	staleViewPoll   = 50 * time.Millisecond
)

// rereadStatus reads the status again once a claim is made. ended is the
// last attempt the claim passed that its owner ended (0: none), and its
// owner ended it after publishing a record naming it (attempt.Ended): a
// status naming an earlier attempt, or no status, is this process's view
// lagging behind the shared filesystem, and is read again every
// staleViewPoll. Still behind after staleViewBudget, the claim is refused
// (ErrLocked): going on from an old record would write over the record of
// an attempt this process never saw, at the same seq.
func rereadStatus(op string, jd *fsys.Dir, ended uint64) (*JobStatus, error) {
	dir := jobDir(jd)
	deadline := time.Now().Add(staleViewBudget)
	for {
		st, err := readStatusIn(jd, newReadOptions(nil), statusSchema())
		if err != nil || ended == 0 || (st != nil && st.Attempt >= ended) {
			return st, err
		}
		if !time.Now().Before(deadline) {
			seen := "no status"
			if st != nil {
				seen = fmt.Sprintf("a status of attempt %d (seq %d)", st.Attempt, st.Seq)
			}
			return nil, errClaimTaken(op, fencedPath(dir, ended),
				fmt.Sprintf("attempt %d was ended by its runner after it wrote a status, yet %s still reads %s after %v: "+
					"this host's view of the shared filesystem is behind", ended, dir.StatusPath(), seen, staleViewBudget),
				fmt.Sprintf("read the status again in a while; if %s was restored from an older copy, remove %s so that the job can be claimed again",
					StatusFile, filepath.Join(fencedPath(dir, ended), attempt.EndMarker)))
		}
		time.Sleep(staleViewPoll)
	}
}

// passed is what passStaleClaims found.
type passed struct {
	next      uint64 // the attempt to claim: the first with neither directory
	taken     uint64 // the last attempt this process fenced and won, 0 if none
	ended     uint64 // the last attempt passed that its owner ended (attempt.Ended), 0 if none
	undecided bool   // with ErrLocked: a claimant was not judged yet
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
// by anyone, and one its owner ended is noted (ended), since a record names
// it. Fencing is what makes a wrong verdict safe (a record left by
// another crash, a claimant on a host whose locks do not reach this one): a
// fenced claimant can no longer write anything, and its Start fails.
func passStaleClaims(op string, jd *fsys.Dir, lk *Lock, a uint64, host string, fallback time.Duration) (passed, error) {
	dir := jobDir(jd)
	var claimant *attempt.Owner
	if p := lk.prev; p != nil {
		claimant = &attempt.Owner{Host: p.Host, PID: p.PID, PIDScope: p.PIDScope, PIDStart: p.PIDStart}
	}
	var p passed
	for n := a + 1; ; n++ {
		v, why, err := judge(op, jd, n, claimant, host, fallback)
		if err != nil {
			return passed{}, err
		}
		switch v {
		case attempt.NoClaim:
			p.next = n
			return p, nil
		case attempt.Over:
			ended, err := attempt.Ended(jd, n)
			if err != nil {
				return passed{}, attemptError(op, dir, n, err, "cannot tell how the attempt ended")
			}
			if ended {
				p.ended = n
			}
			continue
		case attempt.Alive, attempt.Undecided:
			return passed{undecided: v == attempt.Undecided}, errLocked(op, runPath(dir, n),
				heldBy(n, "its claimant, which has not written a status yet", claimant, host, v, why))
		}
		won, err := fence(op, jd, n)
		if err != nil {
			return passed{}, err
		}
		if !won {
			return passed{}, errLocked(op, fencedPath(dir, n), "another process took attempt "+strconv.FormatUint(n, 10)+" over")
		}
		p.taken = n
	}
}

// terminalError: a job in a terminal state is not started again.
func terminalError(op string, dir JobDir, state State) error {
	return errWrongState(op, dir.StatusPath(), invalid{found: string(state), supported: []State{Queued, Running}, msg: fmt.Sprintf("the job is already %s; a finished job is not started again", state), remedy: "submit a new job"})
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
	return errNotOwner(op, runPath(dir, n), n, nil, "attempt "+strconv.FormatUint(n, 10)+
		" was taken over: another process judged this runner gone, and its claim is now "+attempt.FencedName(n)+
		"; nothing was written ("+rootCause(err).Error()+")")
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

// lostClaim reports that claimForStart failed because another process
// owns, or ended, the job's next attempt (or the job ended meanwhile).
func lostClaim(err error) bool {
	return errors.Is(err, ErrLocked) || errors.Is(err, ErrWrongState)
}

// claimFinished claims the next attempt of the finished job in jd, exactly
// as Start and a canceller claim it (take, passing the claims whose claimant
// is gone: passStaleClaims), so that of removers, retriers, starters and
// cancellers on any number of hosts one goes on. refuse says whether a
// status may be acted on (refuseUnfinished for Remove, refuseUnretryable
// for Retry), and refuses every status that is not terminal (nil
// included); it is asked before the claim and again of the status read
// once the claim is held, which must have no later attempt. It returns that
// status. A claim in progress is ErrLocked naming it.
func claimFinished(op string, jd *fsys.Dir, lk *Lock, o startOptions, refuse func(string, *fsys.Dir, *JobStatus) error) (*attempt.Claim, *JobStatus, error) {
	dir := jobDir(jd)
	st, err := readStatusIn(jd, newReadOptions(nil), statusSchema())
	if err == nil {
		err = refuse(op, jd, st)
	}
	if err != nil {
		return nil, nil, err
	}
	a := st.Attempt
	c, p, err := claimAfter(op, jd, lk, a, o.claimOptions)
	if err != nil {
		return nil, nil, err
	}
	now, err := rereadStatus(op, jd, p.ended)
	switch {
	case err != nil:
	case now == nil || !now.State.Terminal():
		err = refuse(op, jd, now)
	case now.Attempt > max(a, p.taken):
		err = errLocked(op, dir.StatusPath(), fmt.Sprintf("attempt %d claimed the job meanwhile", now.Attempt))
	default:
		err = refuse(op, jd, now)
	}
	if err != nil {
		_ = c.Withdraw()
		return nil, nil, err
	}
	return c, now, nil
}

// holding is what removeLocked holds open in the job directory until the
// rename.
type holding struct {
	jd *fsys.Dir // nil once closed
	lk *Lock
}

// release closes the job directory and releases job.lock; twice is fine.
func (h *holding) release() {
	if h.jd != nil {
		h.jd.Close()
		h.jd = nil
	}
	_ = h.lk.Unlock() // its error is the OS's to clear: the lock goes with the descriptor
}

// releaseNamed is release, leaving this process's record in job.lock.
func (h *holding) releaseNamed() {
	_ = h.lk.unlock(true)
	h.release()
}

// withdraw gives up Remove's claim n of dir after a failed rename, so that
// the job is not blocked by a claim nobody will use: through the claim
// while the job directory is held, else (Windows, where both were let go
// before the rename) by removing the empty .run-n. If that fails, the claim
// is judged gone after a lease, as a crashed claimant's is.
func (h *holding) withdraw(op string, dir JobDir, c *attempt.Claim, n uint64) {
	if h.jd != nil {
		_ = c.Withdraw()
		return
	}
	jd, err := openJobDir(op, dir)
	if err != nil {
		return
	}
	defer jd.Close()
	_ = jd.RemoveDir(attempt.RunName(n))
}

// claimPending reports whether a later attempt than st's (nil: no status)
// is claimed, past the attempts already over.
func claimPending(jd *fsys.Dir, st *JobStatus) bool {
	var n uint64 = 1
	if st != nil {
		n = st.Attempt + 1
	}
	there := func(name string) bool { _, err := jd.Lstat(name); return err == nil }
	for ; there(attempt.FencedName(n)); n++ {
	}
	return there(attempt.RunName(n))
}
