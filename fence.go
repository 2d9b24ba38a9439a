package jobstore

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
)

// fenceMarker is created, exclusively, in .fenced-N by the one fencer that
// takes attempt N over.
const fenceMarker = "fenced-by"

// fenceAttempt ends attempt n for everyone and elects one taker: it renames
// .run-n to .fenced-n (never replacing an existing .fenced-n), then creates
// .fenced-n/fenced-by exclusively (O_EXCL; CREATE_NEW on Windows). Exactly
// one caller on any host gets won: the exclusive create decides, not the
// rename, because a rename is not a test-and-set everywhere (Windows renames
// an open handle, and a second fencer whose handle was opened before the
// first rename "renames" the directory onto its own new name and succeeds).
// Deciding by the marker also lets another fencer take over when the one
// that renamed crashed before creating it. The losers must stand down:
// someone else is taking over.
//
// After the rename every write of attempt n's runner fails, because the
// runner creates its temp files in .run-n and renames them by path (see
// writeStatusFenced), and the path no longer resolves.
func fenceAttempt(dir JobDir, n uint64) (won bool, err error) {
	run, fenced := runDirPath(dir, n), fencedDirPath(dir, n)
	err = renameDirNoReplace(run, fenced)
	switch {
	case err == nil:
		if err := syncClaim(dir, run); err != nil {
			return false, err
		}
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, fs.ErrExist), isDirNotEmpty(err):
		// Another fencer or the owner's release renamed it, or a claimant
		// revived .run-n for an instant: the marker decides below.
	default:
		return false, stepError("fence", run, linkCause(err), "cannot end the attempt (rename to "+filepath.Base(fenced)+")", "")
	}
	f, err := os.OpenFile(filepath.Join(fenced, fenceMarker), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	switch {
	case errors.Is(err, fs.ErrExist), errors.Is(err, fs.ErrNotExist):
		return false, nil // taken by another fencer, or never claimed
	case err != nil:
		return false, stepError("fence", fenced, err, "cannot mark the attempt taken over", "")
	}
	host, _ := HostID()
	_, werr := f.WriteString(host + " pid " + strconv.Itoa(os.Getpid()) + "\n") // for people; the name decides
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return true, stepError("fence", fenced, werr, "took the attempt over, but could not record by whom", "nothing to do: the attempt is over and this process took it over")
	}
	return true, nil
}

// writeStatusFenced is WriteStatus for the owner of attempt n: the temp file
// is created inside .run-n and renamed from there by its path relative to
// the job directory (writeRecord with a subdirectory). If .run-n was fenced,
// the create or the rename fails and nothing is written: an *Error of kind
// ErrNotOwner. A write whose rename resolved .run-n before the fence lands
// before the fencer's own write (the fencer reads the status after
// fencing), so the fencer's record always follows it.
func writeStatusFenced(dir JobDir, n uint64, held *heldDir, st JobStatus, opts ...WriteOption) error {
	if err := writeStatus(dir, runPrefix+strconv.FormatUint(n, 10), held, st, opts...); err != nil {
		return fenceError("write status", dir, n, err)
	}
	return nil
}

// syncClaim makes a new or renamed attempt directory's entry in the job
// directory durable (nothing on Windows, which journals it).
func syncClaim(dir JobDir, entry string) error {
	d, err := openDirAt("fence", jobRecord(dir, ""))
	if err != nil {
		return err
	}
	defer d.close()
	if err := d.sync(); err != nil {
		return stepError("fsync directory", string(dir), err, "the attempt's directory "+filepath.Base(entry)+" was renamed, but the job directory was not confirmed on disk", "")
	}
	return nil
}

// fenceError turns a failed write of attempt n's owner into ErrNotOwner
// when the reason is that .run-n is gone: ENOENT or ENOTDIR on the create
// or the rename while the job directory exists. Nothing but a fence (or the
// owner's own release) removes .run-n, so that is the only cause. .run-n is
// not looked up again to confirm: through a cached view (a FUSE or NFS
// client's dentry and attribute caches) it may still appear to exist while
// every operation inside it fails at the server. ErrNotJob when the job
// directory itself is gone.
func fenceError(op string, dir JobDir, n uint64, err error) error {
	if !errors.Is(err, fs.ErrNotExist) && !isNotDir(err) {
		return err
	}
	if _, serr := os.Stat(dir.SpecPath()); errors.Is(serr, fs.ErrNotExist) {
		return errNotJob(op, dir)
	}
	return notOwner(op, dir, n, err)
}

// linkCause is the errno inside an *os.LinkError (rename's error type).
func linkCause(err error) error {
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// notOwner is ErrNotOwner for a write of attempt n that failed because
// .run-n is gone. The failure (ENOENT) is named in the message, not
// wrapped: errors.Is(err, fs.ErrNotExist) would read as "not a job".
func notOwner(op string, dir JobDir, n uint64, cause error) error {
	return errNotOwner(op, runDirPath(dir, n), n, "attempt "+strconv.FormatUint(n, 10)+" was taken over: another process judged this runner gone, and its claim is now "+
		filepath.Base(fencedDirPath(dir, n))+"; nothing was written ("+rootCause(cause).Error()+")", nil)
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
