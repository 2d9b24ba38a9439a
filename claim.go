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
// A Run then renews a lease there (ownership.go) and writes every status through
// a temp file inside .run-(N+1), so that a fence stops its writes. See "Many
// hosts" in docs/platforms.md. This file turns the attempt layer's verdicts
// into the package's errors; claimant.go makes the claims.

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

// judgeOwner is attempt.Judge with the package's errors.
func judgeOwner(op string, jd *fsys.Dir, n uint64, owner *attempt.Owner, host string, fallback time.Duration) (attempt.Verdict, string, error) {
	dir := jobDir(jd)
	v, why, err := attempt.Judge(jd, string(dir), n, owner, host, fallback)
	if err != nil {
		return 0, "", attemptError(op, dir, n, err, "cannot judge the attempt's owner")
	}
	return v, why, nil
}

// fenceAttempt is attempt.Fence with the package's errors.
func fenceAttempt(op string, jd *fsys.Dir, n uint64) (bool, error) {
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
// stale handle that outlasted the retries an *Error wrapping the
// filesystem's error (errIO), anything else a step error of op.
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
// what they fetched for a while (GlusterFS: its cache-timeout, 1 s by
// default; docs/benchmarks.md#glusterfs-how-long-a-client-lags).
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

// passed is what claimant.passStale found.
type passed struct {
	next      uint64 // the attempt to claim: the first with neither directory
	taken     uint64 // the last attempt this process fenced and won, 0 if none
	ended     uint64 // the last attempt passed that its owner ended (attempt.Ended), 0 if none
	undecided bool   // with ErrLocked: a claimant was not judged yet
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

// lostClaim reports that claimant.forStart failed because another process
// owns, or ended, the job's next attempt (or the job ended meanwhile).
func lostClaim(err error) bool {
	return errors.Is(err, ErrLocked) || errors.Is(err, ErrWrongState)
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
