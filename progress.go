package jobstore

import (
	"time"
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
