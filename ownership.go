package jobstore

import (
	"errors"
	"fmt"
	"time"

	"github.com/axqua/jobstore/internal/attempt"
)

// A Run's hold on the attempt it claimed (claim.go): a lease renewed in the
// background, re-established when it lapsed by this process's clock, and
// released at Close.

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
func (r *Run) ownedBy(c *attempt.Claim, o claimOptions) {
	r.own = ownership{claim: c, host: o.host, lease: o.lease}
	r.own.ren = r.renew(c)
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
