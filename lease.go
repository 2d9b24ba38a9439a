package jobstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/axqua/jobstore/internal/proc"
)

// DefaultLease is the lease a runner takes unless WithLease says otherwise:
// long enough that an NFS client's directory attribute cache (acdirmax, 60 s
// by default) cannot hide a fence from a paused runner (see "Many hosts" in
// docs/platforms.md for the bound), short enough that a dead runner on
// another host is marked lost within about two minutes.
const DefaultLease = 90 * time.Second

// defaultLease is DefaultLease under the name the package used first.
const defaultLease = DefaultLease

// minLease is the shortest lease WithLease accepts: renewals every third of
// it must be possible on a loaded machine.
const minLease = 300 * time.Millisecond

// WithLease sets the lease of the Run's claim on its job: the Run renews it
// every d/3 in the background (a small file in the job's attempt
// directory), and a process on another host judges the runner gone, and may
// mark the job lost or start it again, only once it has seen the lease
// unchanged for a whole d by its own clock. The Run stops writing by its
// own clock when its last successful renewal is 2d/3 old (ErrNotOwner),
// before anyone can judge it gone. Default DefaultLease; a d below 300 ms
// makes Start fail with ErrInvalid. On one host, where job.lock and the
// process table decide, the lease is never waited for.
func WithLease(d time.Duration) StartOption {
	return func(o *startOptions) { o.lease = d }
}

// ownership completes the ownership options: the host from HostID() when
// not set, the default lease; an invalid value is ErrInvalid.
func (o *startOptions) ownership(op string, dir JobDir) error {
	if o.lease == 0 {
		o.lease = DefaultLease
	}
	if o.lease < minLease {
		return errInvalid(op, string(dir), "lease", o.lease, fmt.Sprintf("%v or more", minLease),
			fmt.Sprintf("%v is too short to be renewed every third of it", o.lease), "")
	}
	if o.hostSet {
		return validateHostID(o.host)
	}
	h, err := HostID()
	o.host = h
	return err
}

// The runner renews every lease/renewDivisor and stops writing by its own
// clock once its last successful renewal is selfExpiryNum/selfExpiryDen of
// a lease old, before any observer can judge it expired.
const (
	renewDivisor  = 3
	selfExpiryNum = 2
	selfExpiryDen = 3
)

// renewer keeps an attempt's lease alive: every lease/3 it rewrites
// .run-N/lease with a counter. An observer on any host judges the runner
// alive as long as it sees the content change (see leaseObserver), so the
// write needs no fsync: it matters only while the runner's host is up, and
// after a crash whatever the file holds stops changing, which is what
// expires it. It is a plain in-place rewrite for the same reason: a reader
// that catches it half written sees a change, and a change is only ever
// caused by a live writer.
type renewer struct {
	path  string
	lease time.Duration
	stop  chan struct{}
	done  chan struct{}

	mu     sync.Mutex
	n      uint64
	lastOK time.Time // monotonic: when the last successful renewal started
	err    error     // sticky: ErrNotOwner once the claim is found fenced
	dir    JobDir
	att    uint64
	// lost, if set, is called once from the background when ownership is
	// lost (fenced, or the lease lapsed by this process's clock); renewal
	// stops then. Stop must not be called while lost's locks are held.
	lost func(error)
}

// startRenewer renews the lease of attempt n, claimed at claimed (a
// monotonic time from before the claim's mkdir), in the background until
// stop (or until ownership is lost, when it calls lost, if not nil). The
// claim itself counts as the first renewal: an observer that finds no lease
// file yet sees one appear at the first renewal, a third of a lease later,
// which is a change like any other, so Start writes no lease of its own.
func startRenewer(dir JobDir, n uint64, lease time.Duration, claimed time.Time, lost ...func(error)) *renewer {
	r := &renewer{path: filepath.Join(runDirPath(dir, n), leaseFile), lease: lease,
		stop: make(chan struct{}), done: make(chan struct{}), dir: dir, att: n, lastOK: claimed}
	if len(lost) > 0 {
		r.lost = lost[0]
	}
	go r.loop()
	return r
}

func (r *renewer) loop() {
	defer close(r.done)
	t := time.NewTicker(r.lease / renewDivisor)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
			err := r.renew()
			if err != nil && !errors.Is(err, ErrNotOwner) {
				err = r.check(time.Now()) // a transient failure: fatal once the lease lapses
			}
			if err != nil {
				if r.lost != nil {
					r.lost(err)
				}
				return
			}
		}
	}
}

// renew writes the next counter value. A transient failure (EIO, a full
// disk) is not fatal by itself: the lease lapses by the runner's own clock
// if renewals keep failing (see check).
func (r *renewer) renew() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return r.err
	}
	started := time.Now()
	next := r.n + 1
	err := os.WriteFile(r.path, []byte(strconv.FormatUint(next, 10)+"\n"), 0o644)
	if err != nil {
		err = fenceError("renew lease", r.dir, r.att, err)
		if errors.Is(err, ErrNotOwner) {
			r.err = err
		}
		return err
	}
	r.n, r.lastOK = next, started
	return nil
}

// check reports whether the runner may still write: not fenced, and its last
// successful renewal started less than 2/3 of a lease ago by its own
// monotonic clock (an observer needs a whole lease of no change).
func (r *renewer) check(now time.Time) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return r.err
	}
	if age := now.Sub(r.lastOK); age >= r.lease*selfExpiryNum/selfExpiryDen {
		return errNotOwner("check lease", r.path, r.att,
			fmt.Sprintf("the lease lapsed: the last successful renewal was %v ago, lease %v, so another process may already have taken the job over", age.Round(time.Millisecond), r.lease), nil)
	}
	return nil
}

// Stop ends renewal and waits for the background writer.
func (r *renewer) Stop() {
	select {
	case <-r.stop:
	default:
		close(r.stop)
	}
	<-r.done
}

// leaseObserver judges one attempt's lease by this process's own monotonic
// clock: expired once the lease's content has stayed the same for a whole
// lease of observation. No timestamp written by another host is ever
// compared with this host's clock, so clock skew between hosts has no
// effect; only the rates of the two monotonic clocks matter (ppm apart).
type leaseObserver struct {
	lease   time.Duration
	seen    bool
	content string
	since   time.Time // monotonic: when content was first observed
}

// absentLease stands for "no lease file yet" (a claimant between mkdir and
// its first renewal); it can never be a counter's content.
const absentLease = "\x00absent"

// leaseLook is what one look at a lease showed.
type leaseLook int

const (
	leaseFirst   leaseLook = iota // the first look: nothing to compare with
	leaseChanged                  // renewed since the last look: the owner was alive in between
	leaseSame                     // unchanged, for less than a lease
	leaseExpired                  // unchanged for a whole lease of observation
)

// observe records one look at the lease. now must come from time.Now()
// (monotonic) in production.
func (o *leaseObserver) observe(content string, now time.Time) leaseLook {
	switch {
	case !o.seen:
		o.seen, o.content, o.since = true, content, now
		return leaseFirst
	case content != o.content:
		o.content, o.since = content, now
		return leaseChanged
	case now.Sub(o.since) >= o.lease:
		return leaseExpired
	}
	return leaseSame
}

// readLease reads .run-n/lease; absentLease when the directory exists
// without it; an error wrapping fs.ErrNotExist when .run-n is gone.
func readLease(runDir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(runDir, leaseFile))
	if errors.Is(err, fs.ErrNotExist) {
		if _, serr := os.Lstat(runDir); serr != nil {
			return "", serr
		}
		return absentLease, nil
	}
	return string(b), err
}

// ownerVerdict is what an observer concluded about an attempt's owner.
type ownerVerdict int

const (
	ownerAlive     ownerVerdict = iota // the owner lives: leave the job alone
	ownerGone                          // the owner is dead or its lease expired: fence and take over
	ownerOver                          // the attempt is already over (.fenced-n): fence decides who takes it
	ownerNoClaim                       // neither .run-n nor .fenced-n: a runner from before claims
	ownerUndecided                     // not yet judged: the lease was watched for less than a lease
)

func (v ownerVerdict) String() string {
	return [...]string{"alive", "gone", "over", "no claim", "undecided"}[v]
}

// leaseWatch is what this process has seen of the leases it judges, per
// attempt directory (by path), so that judgements that do not wait (Start,
// Reconcile, each pass of ReconcileAll) add up to a whole lease of
// observation across calls. An entry is dropped once its attempt is judged
// gone or over; one stays per attempt judged alive or undecided.
var leaseWatch = struct {
	sync.Mutex
	m map[string]*leaseObserver
}{m: map[string]*leaseObserver{}}

// lookAtLease records one look at the lease of the attempt at run.
func lookAtLease(run, content string, lease time.Duration, now time.Time) (leaseLook, time.Duration) {
	leaseWatch.Lock()
	defer leaseWatch.Unlock()
	o := leaseWatch.m[run]
	if o == nil {
		o = &leaseObserver{}
		leaseWatch.m[run] = o
	}
	o.lease = lease
	look := o.observe(content, now)
	if look == leaseExpired {
		delete(leaseWatch.m, run)
	}
	return look, now.Sub(o.since)
}

// forgetLease drops what this process saw of the lease at run.
func forgetLease(run string) {
	leaseWatch.Lock()
	delete(leaseWatch.m, run)
	leaseWatch.Unlock()
}

// judgePoll is how often a waiting judgement looks at a lease.
func judgePoll(lease time.Duration) time.Duration {
	return min(max(lease/10, 10*time.Millisecond), time.Second)
}

// judgeAttempt decides whether attempt n's owner is alive, as seen from this
// process. On the owner's own host (same host identity and pid scope) the
// process table answers at once: its pid alive with the recorded start time
// is alive, anything else is gone. Elsewhere, or when the pid proves
// nothing, the lease is judged by this process's clock: alive once it
// changes, gone once this process has seen it unchanged for a whole lease
// (leaseWatch keeps the looks of earlier calls). With wait, judgeAttempt
// polls every poll (judgePoll(lease) if poll <= 0) until it decides (up to a lease plus a poll); without,
// it looks once and may answer ownerUndecided. The lease is the owner's own
// (owner.json) or, before owner.json exists, fallback. The flock fast path
// (job.lock held: alive) is the caller's, who holds job.lock while judging.
func judgeAttempt(ctx context.Context, dir JobDir, n uint64, host string, fallback, poll time.Duration, wait bool) (ownerVerdict, string, error) {
	run := runDirPath(dir, n)
	owner, err := readOwner(run)
	if errors.Is(err, fs.ErrNotExist) {
		forgetLease(run)
		if _, ferr := os.Lstat(fencedDirPath(dir, n)); ferr == nil {
			return ownerOver, "the attempt is over", nil
		}
		return ownerNoClaim, "no claim for the attempt", nil
	}
	lease := fallback
	if err == nil && owner != nil {
		if owner.LeaseMS > 0 {
			lease = owner.lease()
		}
		if owner.Host != "" && owner.Host == host {
			switch proc.Judge(owner.PIDScope, owner.PID, owner.PIDStart) {
			case proc.Alive:
				return ownerAlive, fmt.Sprintf("pid %d on this host is alive", owner.PID), nil
			case proc.Dead:
				forgetLease(run)
				return ownerGone, fmt.Sprintf("pid %d on this host is gone", owner.PID), nil
			}
		}
	}
	if poll <= 0 {
		poll = judgePoll(lease)
	}
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		content, err := readLease(run)
		if errors.Is(err, fs.ErrNotExist) {
			forgetLease(run)
			return ownerOver, "the attempt ended while it was watched", nil
		}
		if err != nil {
			return 0, "", stepError("judge lease", run, err, "cannot read the lease", "")
		}
		look, watched := lookAtLease(run, content, lease, time.Now())
		switch look {
		case leaseExpired:
			return ownerGone, fmt.Sprintf("its lease (%v) did not change for a whole lease of observation", lease), nil
		case leaseChanged:
			return ownerAlive, "its lease was renewed", nil
		}
		if !wait {
			return ownerUndecided, fmt.Sprintf("its lease (%v) has been watched for %v without a change; it is judged gone after a whole lease",
				lease, watched.Round(time.Millisecond)), nil
		}
		select {
		case <-ctx.Done():
			return 0, "", context.Cause(ctx)
		case <-t.C:
		}
	}
}
