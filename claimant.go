package jobstore

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/axqua/jobstore/internal/attempt"
	"github.com/axqua/jobstore/internal/fsys"
)

// claimant is one process's part in the claim protocol (claim.go) on one
// job, for one operation: Start, a canceller, Reconcile, Remove or Retry
// (op, which errors name). It holds the job directory (jd) open and its
// job.lock (lk), whose record of a holder that died holding it names the
// claimant of a claim that no status names, and judges other runners as o
// says (this host, the lease of a claim without one). Its methods claim
// the job's next attempt: take (the next free one, passing stale claims),
// takeOver (after fencing a runner judged gone), passStale (past the
// claims whose claimant is gone), forStart and finished (the decisions of
// a starter and of a remover or retrier around them).
type claimant struct {
	op string
	jd *fsys.Dir
	lk *Lock
	o  claimOptions
}

// forStart decides whether this process may run the job whose last
// status is last, and claims the next attempt for it. The caller holds job.lock, so an earlier runner on this host is gone;
// one on another host is judged by its attempt: alive or not yet judged is
// ErrLocked (Start never waits for a lease), gone or over is taken over
// (takeOver). It returns the claim and the status read once it is held;
// when that status still says running, the claim took over its runner,
// judged gone for the reason gone, and the caller must end that attempt
// (markLost) before anything else.
func (cl *claimant) forStart(last *JobStatus) (c *attempt.Claim, now *JobStatus, gone string, err error) {
	op, jd, o := cl.op, cl.jd, cl.o
	dir := jobDir(jd)
	endsAttempt := false
	gone = "job.lock was free while the status said running"
	if last != nil && last.State == Running && last.Attempt > 0 {
		a := last.Attempt
		v, why, err := judgeOwner(op, jd, a, ownerOf(last), o.host, o.lease)
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
	c, now, err = cl.takeOver(last, endsAttempt)
	if err == nil && now != nil && now.State == Running && last != nil && now.Attempt != last.Attempt {
		gone = "attempt " + strconv.FormatUint(now.Attempt, 10) + ": its claimant was judged gone and fenced"
	}
	return c, now, gone, err
}

// takeOver claims the attempt after last's (nil: no status) for this
// process, which holds job.lock. With endsAttempt (last is running,
// and its runner was judged gone, or its attempt a is over), attempt a is
// fenced first. Whoever wins that fence goes on to claim a+1; a process
// that loses it goes on too, and finds the winner's claim of a+1 (judged
// as any claim that no status names, see passStale: a winner that
// died before its first write is fenced in turn) or, if the winner has not
// claimed a+1 yet, claims a+1 itself, which the winner's claim then finds
// taken: of any number of processes one claims the attempt, whoever won
// the fence, and a winner that died never blocks the job. After the claim
// the status is read again (and returned; rereadStatus waits for a record
// of an attempt the claim passed, if its owner ended it): a job that became
// terminal (ErrWrongState) or was claimed by a later attempt meanwhile
// (ErrLocked) is left, and the claim withdrawn.
func (cl *claimant) takeOver(last *JobStatus, endsAttempt bool) (*attempt.Claim, *JobStatus, error) {
	op, jd := cl.op, cl.jd
	dir := jobDir(jd)
	var a uint64
	if last != nil {
		a = last.Attempt
	}
	if endsAttempt {
		won, err := fenceAttempt(op, jd, a)
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
	c, p, err := cl.take(a)
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

// take claims the first attempt after a that can be claimed. The
// common case first: attempt a+1 is free (its mkdir is the test). Only if
// it is claimed or over are the claims after a judged and passed
// (passStale, whose account of them is returned).
func (cl *claimant) take(a uint64) (*attempt.Claim, passed, error) {
	c, err := takeAttempt(cl.op, cl.jd, a+1)
	if !errors.Is(err, ErrLocked) {
		return c, passed{}, err
	}
	p, err := cl.passStale(a)
	if err != nil {
		return nil, p, err
	}
	c, err = takeAttempt(cl.op, cl.jd, p.next)
	return c, p, err
}

// passStale finds the attempt to claim after a status of attempt a,
// clearing the way past claims that no status names: a claimant of a+1
// (a starter or a canceller) that crashed between its mkdir and its first
// status write leaves .run-(a+1) on a job still at attempt a, and would
// block the job for good. Each such claimant is judged as a running owner
// is, by the owner that job.lock names (the previous holder of cl.lk: every
// claimant holds job.lock from before its mkdir, and one that dies holding
// it leaves its record there): on its host at once, by its pid and start
// token; elsewhere, or with no record, by its lease, watched for a whole
// fallback lease (cl.o.lease), since a live claimant writes its first status, or its
// first lease, within a third of one. A gone one is fenced, and only the
// process that wins its fence passes it (taken is the last attempt it won,
// 0 if none); an attempt already over (.fenced-n without .run-n) is passed
// by anyone, and one its owner ended is noted (ended), since a record names
// it. Fencing is what makes a wrong verdict safe (a record left by
// another crash, a claimant on a host whose locks do not reach this one): a
// fenced claimant can no longer write anything, and its Start fails.
func (cl *claimant) passStale(a uint64) (passed, error) {
	op, jd, host, fallback := cl.op, cl.jd, cl.o.host, cl.o.lease
	dir := jobDir(jd)
	var claimant *attempt.Owner
	if p := cl.lk.prev; p != nil {
		claimant = &attempt.Owner{Host: p.Host, PID: p.PID, PIDScope: p.PIDScope, PIDStart: p.PIDStart}
	}
	var p passed
	for n := a + 1; ; n++ {
		v, why, err := judgeOwner(op, jd, n, claimant, host, fallback)
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
		won, err := fenceAttempt(op, jd, n)
		if err != nil {
			return passed{}, err
		}
		if !won {
			return passed{}, errLocked(op, fencedPath(dir, n), "another process took attempt "+strconv.FormatUint(n, 10)+" over")
		}
		p.taken = n
	}
}

// finished claims the next attempt of the finished job, exactly as Start
// and a canceller claim it (take, passing the claims whose claimant is
// gone: passStale), so that of removers, retriers, starters and
// cancellers on any number of hosts one goes on. refuse says whether a
// status may be acted on (refuseUnfinished for Remove, refuseUnretryable
// for Retry), and refuses every status that is not terminal (nil
// included); it is asked before the claim and again of the status read
// once the claim is held, which must have no later attempt. It returns that
// status. A claim in progress is ErrLocked naming it.
func (cl *claimant) finished(refuse func(string, *fsys.Dir, *JobStatus) error) (*attempt.Claim, *JobStatus, error) {
	op, jd := cl.op, cl.jd
	dir := jobDir(jd)
	st, err := readStatusIn(jd, newReadOptions(nil), statusSchema())
	if err == nil {
		err = refuse(op, jd, st)
	}
	if err != nil {
		return nil, nil, err
	}
	a := st.Attempt
	c, p, err := cl.take(a)
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
