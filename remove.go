package jobstore

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"time"

	"github.com/axqua/jobstore/internal/attempt"
	"github.com/axqua/jobstore/internal/fsys"
)

// Removing a finished job. The job directory leaves the root in one step, a
// rename to a hidden name in the same root (removePrefix), made only once
// the remover holds the job's next attempt, as a starter would; then the
// hidden directory is deleted, one name at a time, never through a link.

// Remove removes the finished job in dir: its directory and everything in
// it, read-only files included, on every platform. The job leaves the root
// in one rename: a reader finds it whole or gets ErrNotJob, and no job is
// both started and removed. A nil return survives a power cut. A link in
// the job is removed as a link; a filesystem mounted in it is never entered
// (Remove reports what stays). index.json is not changed (Prune keeps it).
//
// Anything but a finished job is refused with an *Error, the job left as
// it was (but for an empty job.lock where it was missing):
//   - queued, running or no status yet: ErrWrongState, Found the state
//     ("" for none), before anything is touched;
//   - job.lock held, a later attempt claimed (judged as Start judges one),
//     or, on Windows, the directory kept open by another process for about
//     2 s: ErrLocked naming the holder; call again;
//   - an unreadable status: its error; no job.json: ErrNotJob; dir a link:
//     ErrNotRegular; dir's last element not a job ID: ErrInvalid, Subject
//     "job_id", before anything is touched.
//
// How it claims, renames and deletes, what readers see meanwhile, a crash
// at each step, Windows: docs/mechanisms.md#remove.
func Remove(dir JobDir) error {
	const op = "remove"
	_, o, jd, err := openToClaim(op, dir, nil)
	if err != nil {
		return err
	}
	st, err := readStatusIn(jd, newReadOptions(nil), statusSchema())
	if err == nil {
		err = refuseUnfinished(op, jd, st)
	}
	if err != nil {
		jd.Close()
		return err
	}
	lk, err := lockJobIn(op, jd)
	if err != nil {
		jd.Close()
		return err
	}
	return removeLocked(op, jd, lk, o)
}

// Prune removes every finished job under root whose finished_at is older
// than olderThan: a job whose status is terminal and whose finished_at (or,
// for a terminal record without one, its updated_at) is before
// time.Now().Add(-olderThan), as this host's clock tells; 0 removes every
// finished job. Each is removed by Remove's rules, with Remove's
// guarantees, in parallel like List; the others (queued, running, or whose
// status cannot be read) are left alone and not reported.
//
// It returns the job directories it removed, in directory-name order. A
// job that could not be removed does not stop the others: its failure is
// reported in err, which is then an *Error for root whose Unwrap is the
// errors.Join of one *Error per such job (Op "prune", Path its directory,
// unwrapping to Remove's error, so errors.Is(err, ErrLocked) tells whether
// any was busy), and of the failures below. A job removed meanwhile by
// another process is neither removed nor failed. err is also an *Error for
// root itself (unreadable: nothing is removed), and olderThan < 0 is
// ErrInvalid.
//
// Then it clears what interrupted writers left in root once it is older
// than DefaultSweepAge, as ReconcileAll does (sweepRoot): the hidden
// directories of interrupted removals (see Remove) among them.
// And if root has an index.json, the rows of the jobs removed (by this
// call, or by another process meanwhile) are taken out of it, rewritten
// atomically; the other rows stay as they were, and built_at with them
// (a rebuild would read every job again; this costs one read and one write
// of the index). An index that cannot be read or written is a failure in
// err; a RebuildIndex running at the same time may put a removed job back,
// as it may miss any change made while it lists.
func Prune(root string, olderThan time.Duration) ([]JobDir, error) {
	const op = "prune"
	if olderThan < 0 {
		return nil, errInvalid(op, root, invalid{subject: "olderThan", found: olderThan, supported: "a duration >= 0", msg: fmt.Sprintf("%v is negative", olderThan), remedy: "pass a duration >= 0"})
	}
	cutoff := time.Now().Add(-olderThan)
	dirs, err := jobDirs(op, root)
	if err != nil {
		return nil, err
	}
	due := make([]bool, len(dirs))
	parallel(len(dirs), func(i int) {
		st, err := ReadStatus(dirs[i])
		due[i] = err == nil && finishedBefore(st, cutoff)
	})
	errs := make([]error, len(dirs))
	parallel(len(dirs), func(i int) {
		if due[i] {
			errs[i] = Remove(dirs[i])
		}
	})
	var removed []JobDir
	var failed []error
	gone := map[string]bool{}
	for i, dir := range dirs {
		switch err := errs[i]; {
		case !due[i]:
		case err == nil:
			removed = append(removed, dir)
			gone[dir.ID()] = true
		case errors.Is(err, ErrNotJob):
			gone[dir.ID()] = true // removed by another process meanwhile
		default:
			failed = append(failed, errBecause(op, string(dir), err, "the job was not removed", ""))
		}
	}
	jobsFailed := len(failed)
	_, serrs, serr := sweepRoot(op, root, time.Now().Add(-DefaultSweepAge))
	failed = append(append(failed, serrs...), serr)
	failed = append(failed, dropFromIndex(op, root, gone))
	if err := errors.Join(failed...); err != nil {
		msg := fmt.Sprintf("%d of %d finished jobs older than %v could not be removed", jobsFailed, len(removed)+jobsFailed, olderThan)
		if jobsFailed == 0 {
			msg = fmt.Sprintf("%d finished jobs older than %v were removed, but the clean-up after them failed", len(removed), olderThan)
		}
		return removed, errBecause(op, root, err, msg, "see each failure; the jobs that could be removed were")
	}
	return removed, nil
}

// finishedBefore reports whether st is terminal and finished before
// cutoff: its finished_at, or its updated_at if it has none.
func finishedBefore(st *JobStatus, cutoff time.Time) bool {
	if st == nil || !st.State.Terminal() {
		return false
	}
	at := st.UpdatedAt
	if st.FinishedAt != nil {
		at = *st.FinishedAt
	}
	return at.Before(cutoff)
}

// dropFromIndex takes the rows of the jobs named in gone out of root's
// index.json, if there is one and it has any; the rest stays as it was.
func dropFromIndex(op, root string, gone map[string]bool) error {
	if len(gone) == 0 {
		return nil
	}
	path := filepath.Join(root, IndexFile)
	idx, err := ReadIndex(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return errBecause(op, path, err, "cannot take the removed jobs out of the index",
			"rebuild the index (RebuildIndex)")
	}
	jobs := slices.DeleteFunc(slices.Clone(idx.Jobs), func(r IndexRow) bool { return gone[r.ID] })
	bad := slices.DeleteFunc(slices.Clone(idx.Unreadable), func(p IndexProblem) bool { return gone[p.ID] })
	if len(jobs) == len(idx.Jobs) && len(bad) == len(idx.Unreadable) {
		return nil
	}
	idx.Jobs, idx.Unreadable = jobs, bad
	if err := WriteJSONAtomic(path, idx); err != nil {
		return errBecause(op, path, err, "cannot take the removed jobs out of the index",
			"rebuild the index (RebuildIndex)")
	}
	return nil
}

// removeLocked is Remove once job.lock is held (lk): it claims the job's
// next attempt, hides the job directory and deletes it. It closes jd and
// releases lk, whatever happens.
func removeLocked(op string, jd *fsys.Dir, lk *Lock, o startOptions) error {
	dir := jobDir(jd)
	h := &holding{jd: jd, lk: lk}
	defer h.release()
	c, _, err := (&claimant{op, jd, lk, o.claimOptions}).finished(refuseUnfinished)
	if err != nil {
		return err
	}
	id, err := jd.ID()
	if err != nil {
		_ = c.Withdraw()
		return stepError(op, string(dir), unwrapPath(err), "cannot identify the job directory", "nothing was removed; try again")
	}
	atRemoveSeam("claimed", string(dir))
	n := c.N()
	if runtime.GOOS == "windows" {
		// Windows renames no directory while a handle in it is open: the
		// claim's, job.lock's and the directory's own go first. job.lock
		// keeps naming this process, so that a crash from here to the
		// rename leaves a claim the next holder judges by its pid.
		_ = c.Close()
		h.releaseNamed()
	}
	rd, trash, err := hideJob(op, dir, id)
	if err != nil {
		h.withdraw(op, dir, c, n)
		return err
	}
	defer rd.Close()
	_ = c.Close()
	h.release()
	unmarkLive(rd, dir.ID())
	serr := rd.Sync()
	atRemoveSeam("hidden", rd.Join(trash))
	if err := purgeHidden(rd, trash); err != nil {
		return errIO(op, rd.Join(trash), err, "the job is out of the root, but its hidden directory could not be deleted whole",
			"nothing to do for readers, which never see it; Prune deletes it once it is older than "+DefaultSweepAge.String()+
				", or delete it by hand")
	}
	if serr != nil {
		return errIO(op, rd.Path(), serr, "the job is removed, but the jobs root could not be fsynced: after a power cut the job may come back",
			"check the disk; remove the job again if it comes back")
	}
	return nil
}

// hideAttempts bounds how many hidden names hideJob tries: a random name
// that is taken is a collision of 64 random bits, or someone's doing.
const hideAttempts = 3

// hideJob renames the job directory dir, whose identity is id, to a fresh
// hidden name in its root (never replacing anything), and checks that what
// it renamed is that directory; it returns the root, opened (the caller
// closes it), and the hidden name. A job directory that is gone is
// ErrNotJob; one held open past the Windows retries is ErrLocked.
func hideJob(op string, dir JobDir, id fsys.ID) (*fsys.Dir, string, error) {
	rd, err := openDirAt(op, recordAt{dir: filepath.Dir(string(dir))})
	if err != nil {
		return nil, "", err
	}
	name := dir.ID()
	var trash string
	for i := 1; ; i++ {
		trash = removePrefix + name + "-" + strconv.FormatUint(rand.Uint64(), 10)
		err = fsys.RetryBusy(func() error { return rd.RenameDirNoReplace(name, trash) })
		if err == nil || i == hideAttempts || !(errors.Is(err, fs.ErrExist) || fsys.IsDirNotEmpty(err)) {
			break
		}
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		err = errRemovedMeanwhile(op, dir)
	case fsys.IsBusy(err):
		err = errLocked(op, string(dir), "another process holds the job directory, or a file in it, open: "+
			"Windows renames no directory while a handle in it is open, and it stayed open for "+fsys.BusyTimeout.String())
	case err != nil:
		err = stepError(op, string(dir), unwrapPath(err), "cannot rename the job directory to a hidden name",
			"nothing was removed; check that this user may rename entries in the jobs root")
	}
	if err != nil {
		rd.Close()
		return nil, "", err
	}
	if got, err := rd.EntryID(trash); err != nil || got != id {
		// Not the directory claimed: someone put another in its place
		// meanwhile. Give it its name back.
		_ = fsys.RetryBusy(func() error { return rd.RenameDirNoReplace(trash, name) })
		rd.Close()
		return nil, "", errBecause(op, string(dir), err, "the job directory was replaced by another while it was being removed; nothing was removed",
			"look at what is at that path now")
	}
	return rd, trash, nil
}

// finishedStates are the states a job may be removed in.
var finishedStates = []State{Succeeded, Failed, Cancelled, Lost}

// refuseUnfinished is Remove's refusal of a job whose status st (nil: none
// yet) is not terminal, naming the state; a job without job.json is
// ErrNotJob.
func refuseUnfinished(op string, jd *fsys.Dir, st *JobStatus) error {
	dir := jobDir(jd)
	if st != nil && st.State.Terminal() {
		return nil
	}
	if _, err := jd.Lstat(SpecFile); errors.Is(err, fs.ErrNotExist) {
		return errNotJob(op, dir)
	}
	var state State
	msg := "the job has no status yet (it was submitted a moment ago, or its submission stopped after job.json)"
	remedy := "cancel the job first (RequestCancel), then remove it"
	if st != nil {
		state = st.State
		msg = "the job is " + string(st.State)
		if st.State == Running {
			msg += fmt.Sprintf(" (pid %d on host %q)", st.PID, st.Host)
			remedy = "wait for the job to end, or cancel it (RequestCancel) and remove it once it has; " +
				"if its runner is gone, Reconcile marks it lost first"
		}
	}
	if state != Running && findCancelIn(jd) != nil {
		// Start answers ErrCancelRequested as soon as it sees the request,
		// while the canceller may still be writing cancelled.
		msg += ", with a cancel request not yet carried out"
		remedy = "remove it once it is cancelled: its canceller marks it so in a moment (if the canceller died, ReconcileAll or the next Start does)"
	}
	return errWrongState(op, dir.StatusPath(), invalid{found: string(state), supported: finishedStates, msg: msg + "; only a finished job is removed", remedy: remedy})
}

// holding is what removeLocked holds open in the job directory until the
// rename.
type holding struct {
	jd *fsys.Dir // nil once closed
	lk *Lock
}

// release closes the job directory and releases job.lock; twice is fine.
func (h *holding) release() {
	if h.jd != nil {
		h.jd.Close()
		h.jd = nil
	}
	_ = h.lk.Unlock() // its error is the OS's to clear: the lock goes with the descriptor
}

// releaseNamed is release, leaving this process's record in job.lock.
func (h *holding) releaseNamed() {
	_ = h.lk.unlock(true)
	h.release()
}

// withdraw gives up Remove's claim n of dir after a failed rename, so that
// the job is not blocked by a claim nobody will use: through the claim
// while the job directory is held, else (Windows, where both were let go
// before the rename) by removing the empty .run-n. If that fails, the claim
// is judged gone after a lease, as a crashed claimant's is.
func (h *holding) withdraw(op string, dir JobDir, c *attempt.Claim, n uint64) {
	if h.jd != nil {
		_ = c.Withdraw()
		return
	}
	jd, err := openJobDir(op, dir)
	if err != nil {
		return
	}
	defer jd.Close()
	_ = jd.RemoveDir(attempt.RunName(n))
}
