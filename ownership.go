package jobstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"time"
)

// A Run's ownership of its job, across hosts. job.lock is the fast path
// where locks reach every process that uses the jobs root; where they do not
// (two hosts whose shared filesystem does not forward locks), the attempt
// decides: Start claims attempt N+1 over a record of attempt N by creating
// .run-(N+1) (claim.go), renews a lease there (lease.go), and writes every
// status through a temp file inside .run-(N+1), so that a fence (fence.go)
// stops its writes. See "Many hosts" in docs/platforms.md.

// ownership is a Run's claim; its fields are fixed by Start.
type ownership struct {
	attempt uint64
	host    string
	ren     *renewer
	held    *heldDir // the attempt directory, held open until release
}

// claimForStart decides whether this process may run the job whose last
// status is last, and claims the next attempt for it. The caller holds
// job.lock, so an earlier runner on this host is gone; one on another host
// is judged by its attempt: alive or not yet judged is ErrLocked (Start
// never waits for a lease), gone or over is taken over only by the one
// process that wins its fence. After the claim the status is read again
// (and returned): a job that became terminal (ErrInvalid) or was claimed by
// a later attempt meanwhile (ErrLocked) is left, and the claim withdrawn.
func claimForStart(op string, dir JobDir, last *JobStatus, o startOptions) (*claim, *JobStatus, error) {
	var a uint64
	if last != nil {
		a = last.Attempt
	}
	if last != nil && last.State == Running && a > 0 {
		v, why, err := judgeAttempt(context.Background(), dir, a, o.host, o.lease, 0, false)
		if err != nil {
			return nil, nil, err
		}
		switch v {
		case ownerAlive, ownerUndecided:
			return nil, nil, errLocked(op, runDirPath(dir, a), "attempt "+strconv.FormatUint(a, 10)+"'s runner may be alive on another host: "+why)
		case ownerGone, ownerOver:
			won, err := fenceAttempt(dir, a)
			if err != nil {
				return nil, nil, err
			}
			if !won {
				return nil, nil, errLocked(op, fencedDirPath(dir, a), "another process took attempt "+strconv.FormatUint(a, 10)+" over")
			}
		}
		// ownerNoClaim: a runner without attempts; job.lock decided.
	}
	// The common case first: attempt a+1 is free (its mkdir is the test).
	// Only if it is claimed or over are the claims after a judged.
	var taken uint64
	c, err := claimAttempt(dir, a+1, o.lease, o.host)
	if errors.Is(err, ErrLocked) {
		var next uint64
		if next, taken, _, err = passStaleClaims(op, dir, a, o.host, o.lease); err != nil {
			return nil, nil, err
		}
		c, err = claimAttempt(dir, next, o.lease, o.host)
	}
	if err != nil {
		return nil, nil, err
	}
	// A write of the runner of attempt a (or of a stale claimant this
	// process fenced) that resolved its .run directory before the fence may
	// have landed since last was read: continue from it. Anything else that
	// changed the status means someone else owns the job now.
	now, err := ReadStatus(dir)
	switch {
	case err != nil || now == nil:
	case now.State.Terminal():
		err = terminalError(op, dir, now.State)
	case now.Attempt > max(a, taken):
		err = errLocked(op, dir.StatusPath(), fmt.Sprintf("attempt %d claimed the job meanwhile", now.Attempt))
	}
	if err != nil {
		c.withdraw()
		return nil, nil, err
	}
	return c, now, nil
}

// passStaleClaims finds the attempt to claim after a status of attempt a,
// clearing the way past claims that no status names: a claimant of a+1
// (a starter or a canceller) that crashed between its mkdir and its first
// status write leaves .run-(a+1) on a job still at attempt a, and would
// block the job for good. Each such claimant is judged exactly as a running
// owner is (judgeAttempt: on its host by pid and start time, elsewhere by
// its lease on this process's clock; a claim without owner.json by its
// lease file, or its absence, watched for a whole fallback lease, since a
// live claimant writes owner.json and its first lease at once). A gone one
// is fenced, and only the process that wins its fence passes it (taken is
// the last attempt it won, 0 if none); an attempt already over (.fenced-n
// without .run-n) is passed by anyone. Fencing is what makes a wrong
// verdict safe: a fenced claimant can no longer write anything.
//
// next is the first attempt with neither directory. A claimant that may be
// alive, or is not yet judged, is ErrLocked, with undecided set for the
// latter; so is a fence lost to another process. Nothing waits.
func passStaleClaims(op string, dir JobDir, a uint64, host string, fallback time.Duration) (next, taken uint64, undecided bool, err error) {
	for n := a + 1; ; n++ {
		v, why, err := judgeAttempt(context.Background(), dir, n, host, fallback, 0, false)
		if err != nil {
			return 0, 0, false, err
		}
		switch v {
		case ownerNoClaim:
			return n, taken, false, nil
		case ownerOver:
			continue
		case ownerAlive, ownerUndecided:
			return 0, 0, v == ownerUndecided, errLocked(op, runDirPath(dir, n), "attempt "+strconv.FormatUint(n, 10)+
				" is claimed, and its claimant, which has not written a status yet, may be alive: "+why)
		}
		won, err := fenceAttempt(dir, n)
		if err != nil {
			return 0, 0, false, err
		}
		if !won {
			return 0, 0, false, errLocked(op, fencedDirPath(dir, n), "another process took attempt "+strconv.FormatUint(n, 10)+" over")
		}
		taken = n
	}
}

// terminalError: a job in a terminal state is not started again.
func terminalError(op string, dir JobDir, state State) error {
	return errInvalid(op, dir.StatusPath(), "state", string(state), []State{Queued, Running},
		fmt.Sprintf("the job is already %s; a finished job is not started again", state), "submit a new job")
}

// withdraw removes a claim that no status names yet, so that the attempt
// can be claimed again.
func (c *claim) withdraw() {
	_ = c.held.close()
	_ = os.RemoveAll(c.runDir)
}

// end ends a claim whose attempt is over (.run-N becomes .fenced-N, never
// replacing one), so that no claimant can revive it. Fenced by another
// process meanwhile is not an error.
func (c *claim) end(op string) error {
	_ = c.held.close()
	err := renameDirNoReplace(c.runDir, fencedDirPath(c.dir, c.n))
	if err == nil || errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrExist) {
		return nil
	}
	return stepError(op, c.runDir, linkCause(err), "cannot end the attempt (rename to "+fencedPrefix+strconv.FormatUint(c.n, 10)+")",
		"nothing to do: the attempt's lease is no longer renewed, so it is judged gone after a lease")
}

// ownedBy starts the lease renewer of a claim for r; a lost ownership ends
// r's Context.
func (r *Run) ownedBy(c *claim, o startOptions) {
	ren := startRenewer(c.dir, c.n, o.lease, c.at, func(err error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.noteLost(err)
	})
	r.own = ownership{attempt: c.n, host: o.host, ren: ren, held: c.held}
}

// put writes next as the owner of r's attempt: refused by the Run's own
// clock once its lease lapsed, and by the filesystem once its attempt was
// fenced (ErrNotOwner either way). Callers hold r.wmu.
func (r *Run) put(next JobStatus, opts ...WriteOption) error {
	if err := r.own.ren.check(time.Now()); err != nil {
		return err
	}
	return writeStatusFenced(r.dir, r.own.attempt, r.own.held, next, opts...)
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
// Run that lost ownership has nothing to release. Callers hold no lock of
// r's but wmu (the renewer's callback takes r.mu).
func (r *Run) release(lost, finished bool) error {
	if r.own.ren == nil {
		return nil
	}
	r.own.ren.Stop()
	if lost || finished {
		return r.own.held.close()
	}
	c := claim{dir: r.dir, n: r.own.attempt, runDir: runDirPath(r.dir, r.own.attempt), held: r.own.held}
	return c.end("release")
}
