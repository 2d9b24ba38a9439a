package attempt

import (
	"errors"
	"os"
	"strconv"
	"sync"
	"time"
)

// The owner renews every lease/RenewDivisor and stops writing by its own
// clock once its last successful renewal is SelfExpiryNum/SelfExpiryDen of
// a lease old, before any observer can judge it expired (an observer needs
// a whole lease of no change).
const (
	RenewDivisor  = 3
	SelfExpiryNum = 2
	SelfExpiryDen = 3
)

// ErrLapsed: the owner's lease lapsed by its own clock (it was paused, or
// its renewals kept failing): before it writes again it must re-establish
// its claim (Claim.Resume), since another host may meanwhile have judged it
// gone and fenced it, and a cached view of the job directory (an NFS
// client's) may not show that fence yet.
var ErrLapsed = errors.New("the lease lapsed by this process's own clock")

// Renewer keeps a claim's lease alive: every lease/3 it writes a counter
// into .run-n/lease, through the held directory (never through a link at
// the name, never blocking, a regular file only), in place: an observer on
// any host judges the owner alive as long as it sees the content change, so
// the write needs no fsync (after a crash whatever the file holds stops
// changing, which is what expires it), and a reader that catches it half
// written sees a change, which only a live writer causes. After each
// renewal it looks whether the claim was fenced.
type Renewer struct {
	c     *Claim
	lease time.Duration
	stop  chan struct{}
	done  chan struct{}
	event func(error)

	mu     sync.Mutex
	n      uint64
	f      *os.File  // .run-n/lease, opened at the first renewal
	lastOK time.Time // monotonic: when the last successful renewal started
	err    error     // sticky: ErrFenced once the claim is found fenced, ErrLapsed once lapsed
}

// StartRenewer renews c's lease in the background until Stop, or until the
// claim is found fenced (ErrFenced) or the lease lapses by this process's
// clock (ErrLapsed): then renewal stops and event, if not nil, is called
// once with that error, from the background, after the renewer has stopped
// (so event may call Stop). The claim itself counts as the first renewal:
// an observer that finds no lease file yet sees one appear a third of a
// lease later, which is a change like any other.
func StartRenewer(c *Claim, lease time.Duration, event func(error)) *Renewer {
	r := &Renewer{c: c, lease: lease, stop: make(chan struct{}), done: make(chan struct{}), event: event, lastOK: c.at}
	go func() {
		err := r.loop()
		r.closeFile()
		close(r.done)
		if err != nil && r.event != nil {
			r.event(err)
		}
	}()
	return r
}

func (r *Renewer) loop() error {
	t := time.NewTicker(r.lease / RenewDivisor)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return nil
		case <-t.C:
			if err := r.renew(time.Now()); err != nil {
				return err
			}
		}
	}
}

// renew writes the next counter value unless the lease already lapsed (a
// renewal after a lapse would tell observers the owner is alive while a
// fence may be hidden from it). A failure to write (EIO, a full disk) is
// not fatal by itself: the lease lapses by the owner's clock if renewals
// keep failing.
func (r *Renewer) renew(now time.Time) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.checkLocked(now); err != nil {
		r.err = err
		return err
	}
	next := r.n + 1
	if err := r.write(next); err == nil {
		r.n, r.lastOK = next, now
	}
	if fenced, err := r.c.Fenced(); err == nil && fenced {
		r.err = ErrFenced
		return ErrFenced
	}
	return nil
}

func (r *Renewer) write(n uint64) error {
	if r.f == nil { // made through .run-n as named now (see Claim.current), then written in place
		run, err := r.c.current()
		if err != nil {
			return err
		}
		f, err := run.OpenWriter(LeaseFile, 0o644)
		run.Close()
		if err != nil {
			return err
		}
		r.f = f
	}
	_, err := r.f.WriteAt([]byte(strconv.FormatUint(n, 10)+"\n"), 0) // never shorter than the last: no truncate
	return err
}

func (r *Renewer) closeFile() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f != nil {
		_ = r.f.Close()
		r.f = nil
	}
}

// Check reports whether the owner may still write: nil, ErrFenced once the
// claim was found fenced, or ErrLapsed once its last successful renewal is
// 2/3 of a lease old by its own monotonic clock.
func (r *Renewer) Check(now time.Time) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.checkLocked(now)
}

func (r *Renewer) checkLocked(now time.Time) error {
	if r.err != nil {
		return r.err
	}
	if now.Sub(r.lastOK) >= r.lease*SelfExpiryNum/SelfExpiryDen {
		return ErrLapsed
	}
	return nil
}

// Age is how long ago the last successful renewal started.
func (r *Renewer) Age(now time.Time) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return now.Sub(r.lastOK)
}

// Renewed is when the last successful renewal started (the claim, before
// the first).
func (r *Renewer) Renewed() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lastOK
}

// Stop ends renewal and waits for the background writer. Stopping twice,
// or from event, is fine.
func (r *Renewer) Stop() {
	r.mu.Lock()
	select {
	case <-r.stop:
	default:
		close(r.stop)
	}
	r.mu.Unlock()
	<-r.done
}

// Owner is what a judge knows of an attempt's owner, from the record it
// wrote (or nothing, for a claim that no record names yet).
type Owner struct {
	Host     string        // host identity; "" matches no host
	PID      int           // process ID on Host
	PIDScope string        // where PID names a process (see proc.Scope)
	PIDStart string        // the process's start token (see proc.Probe)
	Lease    time.Duration // the owner's lease; 0: unknown
}

// Verdict is what a judge concluded about an attempt's owner.
type Verdict int

const (
	Alive     Verdict = iota // the owner lives: leave the job alone
	Gone                     // the owner is dead or its lease expired: fence and take over
	Over                     // the attempt is already over (.fenced-n): the fence decides who takes it
	NoClaim                  // neither .run-n nor .fenced-n: a runner from before claims
	Undecided                // not yet judged: the lease was watched for less than a lease
)

func (v Verdict) String() string {
	return [...]string{"alive", "gone", "over", "no claim", "undecided"}[v]
}

// absentLease stands for "no lease file yet" (a claimant between its mkdir
// and its first renewal); it can never be a counter's content.
const absentLease = "\x00absent"

// irregularLease, followed by the file's type, stands for a lease file
// that is not a regular file (no runner renews one); it can never be a
// counter's content either.
const irregularLease = "\x00irregular "

// maxLease bounds what a judge reads of a lease file: a counter is at most
// 21 bytes; anything longer is not one, and its first maxLease bytes still
// tell a change.
const maxLease = 64
