package jobstore

import (
	"errors"
	"fmt"
	"time"
)

// lostRemedy is the remedy written into a job marked lost.
const lostRemedy = "the runner died without finishing; resubmit the job or inspect its output"

// Reconcile marks a job whose runner is gone as lost.
//
// Only a job whose status says running is looked at. If its job.lock is
// held, the runner (or another reconciler) is alive: the job is left alone.
// If the lock can be taken, the runner is gone (a process that exits or is
// killed loses its lock), and, holding the lock, Reconcile reads the status
// again (the runner may have finished meanwhile) and, if it still says
// running, writes lost, durably, with seq+1, finished_at, a message naming
// the last owner (pid, host, last update) and a remedy. A job with a cancel
// request (cancel.json) is marked cancelled instead, naming both the runner
// and the request. A queued job (or one with no status) that has a cancel
// request is marked cancelled if its lock is free, as RequestCancel does;
// other queued jobs, and terminal ones, are left alone. changed reports
// that lost or cancelled was written.
// A running job at seq 2^64-1 cannot be marked (seq never wraps):
// ErrInvalid, Subject "seq", and nothing is written.
func Reconcile(dir JobDir) (changed bool, err error) {
	st, err := ReadStatus(dir)
	if err == nil && (st == nil || st.State == Queued) {
		return cancelQueued(dir) // a request written by a tool that cannot lock
	}
	if err != nil || st == nil || st.State != Running {
		return false, err
	}
	lk, err := LockJob(dir)
	if errors.Is(err, ErrLocked) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer func() {
		if uerr := lk.Unlock(); err == nil {
			err = uerr
		}
	}()
	st, err = ReadStatus(dir)
	if err != nil || st == nil || st.State != Running {
		return false, err
	}
	seq, err := nextSeq("reconcile", dir.StatusPath(), st.Seq)
	if err != nil {
		return false, err
	}
	lost := copyStatus(*st)
	now := Now()
	lost.State = Lost
	lost.Seq = seq
	lost.UpdatedAt = now
	lost.FinishedAt = &now
	lost.Message = fmt.Sprintf("the runner (pid %d on host %q, last update %s) is gone: job.lock was free while the status said running",
		st.PID, st.Host, st.UpdatedAt.Format(time.RFC3339))
	lost.Error = "the runner went away without writing a final state"
	lost.Remedy = lostRemedy
	lost.ExitCode = nil
	reconcileCancelled(dir, &lost)
	if err := WriteStatus(dir, lost); err != nil {
		return false, err
	}
	return true, nil
}

// ReconcileResult is what ReconcileAll did to one job.
type ReconcileResult struct {
	Dir     JobDir
	Changed bool     // marked lost, or cancelled (see Reconcile)
	Swept   []string // temp files removed
	Err     error
}

// ReconcileAll runs Reconcile and SweepTemps (DefaultSweepAge) on every job
// directory under root (the directories List reads), in parallel like List,
// and returns one result per directory, in directory-name order. One job's
// failure is in its result, never the call's; the error is for root itself.
// A sweep error is reported only when Reconcile succeeded.
func ReconcileAll(root string) ([]ReconcileResult, error) {
	dirs, err := jobDirs("reconcile", root)
	if err != nil {
		return nil, err
	}
	results := make([]ReconcileResult, len(dirs))
	parallel(len(dirs), func(i int) {
		r := ReconcileResult{Dir: dirs[i]}
		r.Changed, r.Err = Reconcile(dirs[i])
		var serr error
		r.Swept, serr = SweepTemps(dirs[i], DefaultSweepAge)
		if r.Err == nil {
			r.Err = serr
		}
		results[i] = r
	})
	return results, nil
}
