package jobstore

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/axqua/jobstore/internal/attempt"
	"github.com/axqua/jobstore/internal/fsys"
)

// lostRemedy is the remedy written into a job marked lost.
const lostRemedy = "the runner died without finishing; resubmit the job or inspect its output"

// Reconcile marks a job whose runner is gone as lost.
//
// A queued job (or one with no status) is looked at only if a later attempt
// is claimed: a starter or canceller that crashed between its claim and its
// first status write leaves one, and it would make every Start ErrLocked.
// Holding job.lock (if held, a starter is at work: the job is left alone),
// Reconcile judges the claimant as it judges a runner (below; by the lease
// alone, DefaultLease, for a claim without owner.json) and fences it if it
// is gone. The status stays queued (changed is false), and the next Start
// claims the attempt after the fenced one.
//
// Otherwise only a job whose status says running is looked at. If its
// job.lock is held, the runner (or another reconciler) is alive: the job is left alone.
// If the lock can be taken, the runner is gone from this host (a process
// that exits or is killed loses its lock). Holding the lock, Reconcile reads
// the status again (the runner may have finished meanwhile). A status of a
// runner that claimed an attempt (Attempt > 0) is then judged by that
// attempt, since the runner may live on another host whose locks do not
// reach this one: on this host (same host identity and process table) by
// its pid; elsewhere by its lease, which must have been seen unchanged for a
// whole lease by this process's clock (see WithLease). Reconcile does not
// wait for that: each call looks once, and the looks of earlier calls in
// this process count, so a reconciler that calls it every P marks a runner
// that died on another host lost within lease + 2P of its death (lease + P
// after the first call that follows it); ReconcileAll waits. A runner judged
// gone is fenced first (claim.go): of all the reconcilers and starters on
// all hosts exactly one takes the job over, and the fenced runner can no
// longer write. A live runner is never marked lost.
//
// The one that takes over (it claims the job's next attempt, as Start does,
// whether or not it won the fence: see "Many hosts" in docs/platforms.md)
// writes lost as that attempt's owner, durably, with seq+1, finished_at,
// the attempt it claimed, a message naming the last owner (pid, host, last
// update) and why it is judged gone, and a remedy, then ends the attempt. A job with a cancel request (cancel.json) is
// marked cancelled instead, naming both the runner and the request. A
// queued job (or one with no status) that has a cancel request is marked
// cancelled if its lock is free, as RequestCancel does; other queued jobs,
// and terminal ones, are left alone (but for the stale claims above).
// changed reports that lost or cancelled was written (lost, too, for a
// queued job whose fenced claimant's first write landed before the fence:
// the job is then running an attempt judged gone). A running job at seq 2^64-1 cannot be marked (seq never
// wraps): ErrInvalid, Subject "seq", and nothing is written.
// A dir whose last element is not a job ID ("/", ".", "root/j/..", a
// dot-name) is ErrInvalid, Subject "job_id", before anything is touched.
func Reconcile(dir JobDir) (changed bool, err error) {
	if err := checkJobDir("reconcile", dir); err != nil {
		return false, err
	}
	changed, _, err = reconcileJob(dir.clean())
	return changed, err
}

// reconcileJob is Reconcile; undecided reports a runner on another host whose
// lease has not yet been watched for a whole lease.
func reconcileJob(dir JobDir) (changed, undecided bool, err error) {
	st, err := ReadStatus(dir)
	queued := err == nil && (st == nil || st.State == Queued)
	if queued && findCancel(dir) != nil {
		changed, err = cancelQueued(dir) // a request written by a tool that cannot lock
		return changed, false, err
	}
	if err != nil || (!queued && st.State != Running) {
		return false, false, err
	}
	jd, err := openJobDir("reconcile", dir)
	if err != nil {
		return false, false, err
	}
	defer jd.Close()
	if queued && !claimPending(jd, st) {
		return false, false, nil // a queued job without a claim is not locked: a Start may be taking it
	}
	lk, err := lockJobIn("reconcile", jd)
	if errors.Is(err, ErrLocked) {
		return false, false, nil
	}
	if err != nil {
		return false, false, err
	}
	defer func() {
		if uerr := lk.Unlock(); err == nil {
			err = uerr
		}
	}()
	st, err = readStatusIn(jd, newReadOptions(nil), statusSchema())
	if err != nil {
		return false, false, err
	}
	host, err := HostID()
	if err != nil {
		return false, false, err
	}
	if st == nil || st.State == Queued {
		return clearStaleClaims(jd, lk, st, host)
	}
	if st.State != Running {
		return false, false, nil
	}
	why := "job.lock was free while the status said running"
	endsAttempt := false
	if a := st.Attempt; a > 0 {
		v, judged, err := judgeOwner("reconcile", jd, a, ownerOf(st), host, DefaultLease)
		switch {
		case err != nil:
			return false, false, err
		case v == attempt.Alive:
			return false, false, nil
		case v == attempt.Undecided:
			return false, true, nil
		case v == attempt.Gone || v == attempt.Over:
			endsAttempt = true
			why = "attempt " + strconv.FormatUint(a, 10) + ": " + judged
		}
	}
	return takeOverLost(jd, lk, st, endsAttempt, host, why)
}

// takeOverLost takes over the job in jd, whose status st says running an
// attempt judged gone (endsAttempt: that attempt's claim is still to be
// fenced), and marks it lost for why. It takes the job over as a starter
// does, so that of reconcilers and starters on any number of hosts
// exactly one writes, and none writes over another's record. It changes
// nothing if another process took the job over, or if the status it reads
// once it holds the claim no longer says running st's attempt (a write of
// the runner that resolved its .run directory before the fence landed: a
// job that finished is left alone).
func takeOverLost(jd *fsys.Dir, lk *Lock, st *JobStatus, endsAttempt bool, host, why string) (changed, undecided bool, err error) {
	c, now, err := (&claimant{"reconcile", jd, lk, claimOptions{host: host, lease: DefaultLease}}).takeOver(st, endsAttempt)
	if lostClaim(err) {
		return false, false, nil
	}
	if err != nil {
		return false, false, err
	}
	if now == nil || now.State != Running || now.Attempt != st.Attempt {
		_ = c.Withdraw()
		return false, false, nil
	}
	return markLost(jobDir(jd), c, now, why)
}

// markLost writes lost over st, the status of a runner judged gone, as the
// owner of claim c (the attempt after st's, which the record names), then
// ends c's attempt, as a canceller does.
func markLost(dir JobDir, c *attempt.Claim, st *JobStatus, why string) (changed, undecided bool, err error) {
	seq, err := nextSeq("reconcile", dir.StatusPath(), st.Seq)
	if err != nil {
		_ = c.Withdraw()
		return false, false, err
	}
	lost := copyStatus(*st)
	now := Now()
	lost.State = Lost
	lost.Seq = seq
	lost.Attempt = c.N()
	lost.UpdatedAt = now
	lost.FinishedAt = &now
	lost.Message = fmt.Sprintf("the runner (pid %d on host %q, last update %s) is gone: %s",
		st.PID, st.Host, st.UpdatedAt.Format(time.RFC3339), why)
	lost.Error = "the runner went away without writing a final state"
	lost.Remedy = lostRemedy
	lost.ExitCode = nil
	if spec, err := ReadSpec(dir); err == nil {
		end := endOf(&lost, Lost, now)
		end.Attempt = st.Attempt // the attempt judged gone, not the reconciler's claim
		if due, ok := retryDue(spec, st, end, findCancel(dir) != nil, now); ok {
			lost = requeued(spec, st, end, due)
			lost.Seq, lost.Attempt, lost.UpdatedAt = seq, c.N(), now
		} else if keepsAttempts(spec, st) {
			lost.Attempts = withEnd(st, end)
		}
	}
	if lost.State == Lost {
		reconcileCancelled(dir, &lost) // a job put back meanwhile asked to stop: Start marks it cancelled
	}
	if err := writeStatusAs(c, dir, lost, nil); err != nil {
		_ = c.Withdraw()
		return false, false, ownerWriteError("reconcile", dir, c.N(), err)
	}
	err = endClaim("reconcile", dir, c)
	if lost.State.Terminal() {
		retire(dir) // ended: out of the live index, as Finish takes its job out
	}
	return true, false, err
}

// clearStaleClaims is Reconcile of a queued job (st, nil if it has no
// status), under its job.lock: claims of later attempts whose claimants
// crashed before their first status write are judged and fenced
// (passStaleClaims), so that the next Start proceeds; the status stays
// queued. If a fenced claimant's write landed meanwhile (it resolved its
// .run directory before the fence), the job is running an attempt this
// process took over, and is marked lost.
func clearStaleClaims(jd *fsys.Dir, lk *Lock, st *JobStatus, host string) (changed, undecided bool, err error) {
	var a uint64
	if st != nil {
		a = st.Attempt
	}
	p, err := (&claimant{"reconcile", jd, lk, claimOptions{host: host, lease: DefaultLease}}).passStale(a)
	if errors.Is(err, ErrLocked) {
		return false, p.undecided, nil // alive, undecided, or taken over by another process
	}
	if err != nil || p.taken == 0 {
		return false, false, err
	}
	taken := p.taken
	if st, err = readStatusIn(jd, newReadOptions(nil), statusSchema()); err != nil || st == nil || st.State != Running || st.Attempt != taken {
		return false, false, err
	}
	// The job runs attempt taken, whose runner this process fenced: it
	// alone takes the job over, claiming the attempt after it.
	return takeOverLost(jd, lk, st, false, host, "attempt "+strconv.FormatUint(taken, 10)+": its claimant was judged gone and fenced")
}

// ReconcileResult is what ReconcileAll did to one job.
type ReconcileResult struct {
	Dir     JobDir
	Changed bool     // marked lost, or cancelled (see Reconcile)
	Swept   []string // temp files removed
	Err     error
}

// reconcilePoll is how often ReconcileAll looks again at the jobs whose
// runner on another host it has not yet judged.
const reconcilePoll = 250 * time.Millisecond

// ReconcileAll runs Reconcile and SweepTemps (DefaultSweepAge) on every job
// directory under root (the directories List reads), in parallel like List,
// and returns one result per directory, in directory-name order. One job's
// failure is in its result, never the call's; the error is for root itself.
// A sweep error is reported only when Reconcile succeeded.
//
// It also clears what interrupted writes left that is no job, once it is
// older than DefaultSweepAge (a writer at work is never that old): the
// root's own temp files (index.json's), the hidden directories in which
// a crashed Submit was building a job (see Submit) and those of a removal
// that did not finish (see Remove); and, in a root that
// holds at least one job, a directory without job.json that holds nothing
// but temp files, unchanged for DefaultSweepAge, as an interrupted
// WriteSpec of an older jobstore left it. A directory so removed is not in
// the results; a root-level leftover that cannot be removed is, as a
// result naming its path with the error. Everything else (a directory with
// any other file, one that is younger, a path that holds no job at all) is
// left alone and reported as Reconcile reports it (ErrNotJob).
//
// Unlike Reconcile, it waits until every running job (and every stale
// claim of a queued one) is judged: a runner on
// another host (one whose job.lock this host cannot see) is watched, all of
// them at once, every 250 ms, until its lease changes (alive, within a third
// of its lease) or has stayed the same for a whole lease (gone). So it
// returns within the longest lease among those runners plus 250 ms; on one
// host, where job.lock and the process table decide, at once.
func ReconcileAll(root string) ([]ReconcileResult, error) {
	const op = "reconcile"
	cutoff := time.Now().Add(-DefaultSweepAge)
	_, rootErrs, rootErr := sweepRoot(op, root, cutoff)
	dirs, err := jobDirs(op, root)
	if err != nil {
		return nil, err
	}
	if rootErr != nil { // the root could be listed, but not opened as a directory
		return nil, rootErr
	}
	results := make([]ReconcileResult, len(dirs))
	undecided := make([]bool, len(dirs))
	todo := make([]int, len(dirs))
	for i := range todo {
		todo[i] = i
	}
	for {
		parallel(len(todo), func(k int) {
			i := todo[k]
			results[i] = ReconcileResult{Dir: dirs[i]}
			if results[i].Err = checkJobDir(op, dirs[i]); results[i].Err == nil {
				results[i].Changed, undecided[i], results[i].Err = reconcileJob(dirs[i])
			}
		})
		next := todo[:0]
		for _, i := range todo {
			if undecided[i] {
				next = append(next, i)
			}
		}
		if todo = next; len(todo) == 0 {
			break
		}
		time.Sleep(reconcilePoll)
	}
	results = removeLeftovers(root, results, cutoff)
	parallel(len(results), func(i int) {
		var serr error
		results[i].Swept, serr = SweepTemps(results[i].Dir, DefaultSweepAge)
		if results[i].Err == nil {
			results[i].Err = serr
		}
	})
	failed := make([]ReconcileResult, len(rootErrs))
	for i, err := range rootErrs {
		failed[i] = ReconcileResult{Dir: JobDir(errPath(err)), Err: err}
	}
	return append(failed, results...), nil
}

// removeLeftovers removes, in a root where some job reconciled without
// error (so root holds jobs: job.json was read), the directories found
// without job.json that removeLeftover takes for what an interrupted
// WriteSpec left, and returns the results without them.
func removeLeftovers(root string, results []ReconcileResult, cutoff time.Time) []ReconcileResult {
	if !slices.ContainsFunc(results, func(r ReconcileResult) bool { return r.Err == nil }) {
		return results
	}
	return slices.DeleteFunc(results, func(r ReconcileResult) bool {
		return errors.Is(r.Err, ErrNotJob) && removeLeftover(root, r.Dir.ID(), cutoff)
	})
}

// errPath is the path an *Error names.
func errPath(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Path
	}
	return ""
}
