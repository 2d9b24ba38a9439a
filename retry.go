package jobstore

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"time"

	"github.com/axqua/jobstore/internal/fsys"
)

// The retry policy: which ended attempt is tried again, and when. Finish,
// Reconcile and a Worker's rescue apply it; Retry gives one more attempt
// by hand. docs/lifecycle.md ("Retries") tells the whole story.

// DefaultBackoff is the delay before a job's first retry when its spec sets
// no Backoff; each later retry waits twice the one before, up to
// MaxBackoff (DefaultMaxBackoff when not set).
const DefaultBackoff = 10 * time.Second

// DefaultMaxBackoff caps the delay between retries when the spec sets no
// MaxBackoff.
const DefaultMaxBackoff = 10 * time.Minute

// retryDelay is how long the job waits after its nth counted failure
// (n >= 1) before it may start again: Backoff·2^(n-1), capped at
// MaxBackoff, then drawn at random from its upper half ("equal jitter"), so
// that jobs that failed together do not all come back at once, and no
// delay is ever below half the policy's or above the cap.
func retryDelay(spec JobSpec, n int) time.Duration {
	base, limit := spec.Backoff, spec.MaxBackoff
	if base <= 0 {
		base = DefaultBackoff
	}
	if limit <= 0 {
		limit = max(DefaultMaxBackoff, base)
	}
	d := base
	for i := 1; i < n && d < limit; i++ {
		if d > limit/2 {
			d = limit // doubling would pass the cap, or wrap
			break
		}
		d *= 2
	}
	d = min(d, limit)
	half := d / 2
	return half + rand.N(d-half+1)
}

// countedFailures is how many of st's ended attempts count against
// MaxAttempts: those that failed or were lost, unless their worker stopped
// them (Interrupted).
func countedFailures(st *JobStatus) int {
	n := 0
	for _, a := range st.Attempts {
		if (a.State == Failed || a.State == Lost) && !a.Interrupted {
			n++
		}
	}
	return n
}

// keepsAttempts reports whether the job's status keeps the outcome of each
// attempt: a job that may be retried, or one that was.
func keepsAttempts(spec JobSpec, st *JobStatus) bool {
	return spec.MaxAttempts > 1 || (st != nil && len(st.Attempts) > 0)
}

// endOf is how the attempt st describes ended, as status.json's attempts
// keep it: state is how it ended, at now.
func endOf(st *JobStatus, state State, now time.Time) AttemptEnd {
	return AttemptEnd{Attempt: st.Attempt, State: state, StartedAt: clonePtr(st.StartedAt), EndedAt: now,
		Host: st.Host, ExitCode: clonePtr(st.ExitCode), Error: st.Error}
}

// withEnd returns st's attempts with end added, unless they hold that
// attempt already: the last one kept has its attempt number, or (a lost
// record, which a takeover writes under an attempt of its own and whose
// attempts keep the attempt judged gone) its state and end time.
func withEnd(st *JobStatus, end AttemptEnd) []AttemptEnd {
	as := append([]AttemptEnd(nil), st.Attempts...)
	if n := len(as); n > 0 {
		l := as[n-1]
		if (l.Attempt == end.Attempt && end.Attempt != 0) || (l.State == end.State && l.EndedAt.Equal(end.EndedAt)) {
			return as
		}
	}
	return append(as, end)
}

// retryDue reports when the job may start again after the attempt that
// ended with end, by spec's policy, and whether it may at all: a failure
// or a loss that is not the last of MaxAttempts, of a job with no cancel
// request (hasCancel).
func retryDue(spec JobSpec, st *JobStatus, end AttemptEnd, hasCancel bool, now time.Time) (time.Time, bool) {
	if hasCancel || (end.State != Failed && end.State != Lost) {
		return time.Time{}, false
	}
	if end.Interrupted {
		return now, true
	}
	n := countedFailures(st) + 1
	if n >= max(spec.MaxAttempts, 1) {
		return time.Time{}, false
	}
	return normTime(now.Add(retryDelay(spec, n))), true
}

// requeued is the queued record that puts the job back after the attempt
// of st ended with end, to start at due: what ran is cleared, the outcome
// joins the attempts, and the message says what happened and when the
// next attempt is due. The caller stamps seq, attempt and updated_at.
func requeued(spec JobSpec, st *JobStatus, end AttemptEnd, due time.Time) JobStatus {
	q := JobStatus{JobID: st.JobID, State: Queued, Seq: st.Seq, Attempt: st.Attempt, Attempts: withEnd(st, end)}
	why := end.Error
	if why == "" {
		why = string(end.State)
	}
	n := NumberAttempts(spec, &q)
	ended := n.Ended[len(n.Ended)-1]
	switch {
	case end.Interrupted:
		q.Message = fmt.Sprintf("attempt %d was interrupted (%s); it is queued again", ended, why)
	default:
		q.RetryAt = &due
		q.Message = fmt.Sprintf("attempt %d %s (%s); retry %d of %d at %s", ended, end.State, why,
			n.Current, n.Limit, due.Format(time.RFC3339))
	}
	return q
}

// DueAt is when a queued job (or one without a status yet) may start, as
// StartNext and Workers read it: the later of spec's NotBefore and st's
// RetryAt, and whether RetryAt is that time. It is zero for a job in
// another state and for one due at once (neither is set); a time in the
// past means due now. spec may be nil (NotBefore unknown), st too (no
// status yet).
func DueAt(spec *JobSpec, st *JobStatus) (due time.Time, retry bool) {
	if st != nil && st.State != Queued {
		return time.Time{}, false
	}
	var sp JobSpec
	if spec != nil {
		sp = *spec
	}
	due, why := dueAt(sp, st)
	return due, why == "retry_at"
}

// dueAt is when a queued job may start, and which field says so: its
// spec's not_before, or the retry_at of a pending retry, whichever is
// later (zero: at once).
func dueAt(spec JobSpec, st *JobStatus) (time.Time, string) {
	due, why := spec.NotBefore, "not_before"
	if st != nil && st.RetryAt != nil && st.RetryAt.After(due) {
		due, why = *st.RetryAt, "retry_at"
	}
	return due, why
}

// Retry gives a job that ended failed, lost or cancelled one more attempt:
// it writes the job queued again, durably, with seq+1, its last attempt's
// outcome added to the status's attempts, and no retry_at (it is due at
// once); a cancelled job's cancel.json is deleted first. The job then runs
// once more and, if that attempt fails too, ends as its policy says (an
// attempt added by hand counts as one of MaxAttempts' failures, so a job
// retried after its last attempt gets exactly one).
//
// A job that is queued, running or succeeded is refused with
// ErrWrongState, and nothing is written. Retry claims the job's next
// attempt as Remove and Start do, so of any number of Retry, Remove, Start
// and RequestCancel calls on any number of hosts one acts on a given
// record: two racing Retry calls add one attempt (the other is ErrLocked or
// ErrWrongState). A dir whose last element is not a job ID
// is ErrInvalid, Subject "job_id", before anything is touched.
//
// StartNext and Workers learn of the retry from the job's entry in the
// live index (LiveDir), made again, at their next look.
func Retry(dir JobDir) error {
	const op = "retry"
	dir, o, jd, err := openToClaim(op, dir, nil)
	if err != nil {
		return err
	}
	defer jd.Close()
	st, err := readStatusIn(jd, newReadOptions(nil), statusSchema())
	if err == nil {
		err = refuseUnretryable(op, jd, st) // before job.lock, which records its holder
	}
	if err != nil {
		return err
	}
	lk, err := lockJobIn(op, jd)
	if err != nil {
		return err
	}
	defer func() { _ = lk.Unlock() }()
	c, last, err := (&claimant{op, jd, lk, o.claimOptions}).finished(refuseUnretryable)
	if err != nil {
		return err
	}
	if last.State == Cancelled {
		if err := jd.Unlink(CancelFile); err != nil && !errors.Is(err, fs.ErrNotExist) {
			_ = c.Withdraw()
			return stepError(op, dir.CancelPath(), unwrapPath(err), "cannot delete the cancel request of the cancelled job",
				"nothing was changed; check that this user may delete files in the job directory")
		}
	}
	seq, err := nextSeq(op, dir.StatusPath(), last.Seq)
	if err != nil {
		_ = c.Withdraw()
		return err
	}
	now := Now()
	end := endOf(last, last.State, now)
	if last.FinishedAt != nil {
		end.EndedAt = *last.FinishedAt
	}
	q := JobStatus{JobID: last.JobID, State: Queued, Seq: seq, UpdatedAt: now, Attempt: c.N(), Attempts: withEnd(last, end)}
	n := NumberAttempts(JobSpec{}, &q) // the numbers of ended attempts need no spec
	q.Message = fmt.Sprintf("retried by hand after attempt %d (%s)", n.Ended[len(n.Ended)-1], last.State)
	if err := writeStatusAs(c, dir, q, nil); err != nil {
		_ = c.Withdraw()
		return ownerWriteError(op, dir, c.N(), err)
	}
	if err := endClaim(op, dir, c); err != nil {
		return err
	}
	markLiveIn(dir)
	return nil
}

// refuseUnretryable is Retry's refusal of a status it may not act on:
// anything but failed, lost and cancelled (ErrWrongState),
// and a directory that is not a job (ErrNotJob).
func refuseUnretryable(op string, jd *fsys.Dir, st *JobStatus) error {
	if st != nil && (st.State == Failed || st.State == Lost || st.State == Cancelled) {
		return nil
	}
	dir := jobDir(jd)
	if _, err := jd.Lstat(SpecFile); errors.Is(err, fs.ErrNotExist) {
		return errNotJob(op, dir)
	}
	in := invalid{supported: []State{Failed, Lost, Cancelled},
		msg: "the job has no status yet: it has not run", remedy: "nothing to retry: it runs when a worker takes it"}
	if st != nil {
		in.found = string(st.State)
		switch st.State {
		case Queued:
			in.msg = "the job is queued: it has yet to run"
		case Running:
			in.msg = fmt.Sprintf("the job is running (pid %d on host %q)", st.PID, st.Host)
			in.remedy = "wait for it to end: a failed attempt is retried by its policy (max_attempts), and a finished job by hand"
		default:
			in.msg = "the job " + string(st.State) + "; there is nothing to retry"
			in.remedy = "submit a new job to run this work again"
		}
	}
	return errWrongState(op, dir.StatusPath(), in)
}
