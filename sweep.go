package jobstore

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/axqua/jobstore/internal/attempt"
	"github.com/axqua/jobstore/internal/fsys"
)

// SweepTemps removes the temp files a crashed writer left in dir: names for
// which IsTempName is true, regular files, last modified more than olderThan
// ago. It also sweeps, by the same rule, the .fenced-N directories of
// attempts that are over (a runner fenced while writing may leave its temp
// file there; no writer ever uses that directory again), and returns those
// names as ".fenced-N/<name>". Of a finished job (its status terminal) it
// removes the empty .run-N directories of its attempts (N up to the one the
// status names) once neither they nor status.json have changed for
// olderThan or DefaultSweepAge, whichever is longer: until then a process
// whose view of status.json is older (a network filesystem's cache) may
// still judge the attempt by its claim. It leaves alone everything else:
// the records, a younger temp file (left to its writer), the .run-N
// directory of an attempt not yet over (its live runner's temp files,
// owner.json and lease), and the .fenced-N directories themselves and their
// fence marker, which must stay forever so that nobody revives the attempt.
//
// It returns the names removed (base names, or relative to dir as above). A
// file that vanished meanwhile (another sweeper, its writer) is not an
// error; other failures are reported after the sweep went on with the rest.
// olderThan < 0 is ErrInvalid, and so is a dir whose last element is not a
// job ID (Subject "job_id"): a root is swept by ReconcileAll and
// RebuildIndex, never as a job directory. dir must not be a symbolic link
// (ErrNotRegular), and neither is a .fenced-N followed: the sweep removes
// names relative to the directory it opened, never through a link.
func SweepTemps(dir JobDir, olderThan time.Duration) (removed []string, err error) {
	const op = "sweep temp files"
	if err := checkJobDir(op, dir); err != nil {
		return nil, err
	}
	dir = dir.clean()
	if olderThan < 0 {
		return nil, errInvalid(op, string(dir), invalid{subject: "olderThan", found: olderThan, supported: "a duration >= 0", msg: fmt.Sprintf("%v is negative", olderThan), remedy: "pass a duration >= 0"})
	}
	now := time.Now()
	cutoff := now.Add(-olderThan)
	removed, attempts, errs, err := sweepDir(op, jobRecord(dir, ""), cutoff)
	if err != nil {
		return nil, err
	}
	var fenced, runs []string
	for _, name := range attempts {
		if _, isFenced, _ := attempt.Parse(name); isFenced {
			fenced = append(fenced, name)
		} else {
			runs = append(runs, name)
		}
	}
	if len(runs) > 0 {
		removed = append(removed, sweepFinishedRuns(op, dir, runs, now.Add(-max(olderThan, DefaultSweepAge)))...)
	}
	for _, name := range fenced {
		more, _, ferrs, err := sweepDir(op, recordAt{dir: filepath.Join(string(dir), name), job: true}, cutoff)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			errs = append(errs, err)
		}
		for _, m := range more {
			removed = append(removed, filepath.Join(name, m))
		}
		errs = append(errs, ferrs...)
	}
	if len(errs) > 0 {
		return removed, errIO(op, string(dir), errors.Join(errs...), "cannot remove some temp files",
			"check the permissions of the directory; the files are safe to remove by hand")
	}
	return removed, nil
}

// sweepDir removes the old temp files directly in at.dir (see SweepTemps)
// and lists the .run-N and .fenced-N names it holds. err is for the
// directory itself; errs for the files.
func sweepDir(op string, at recordAt, cutoff time.Time) (removed, attempts []string, errs []error, err error) {
	d, err := openDirAt(op, at)
	if err != nil {
		return nil, nil, nil, err
	}
	defer d.Close()
	names, err := d.Names()
	if err != nil {
		return nil, nil, nil, errIO(op, at.dir, err, "cannot read the directory", "check the path and permissions")
	}
	for _, name := range names {
		if _, _, ok := attempt.Parse(name); ok {
			attempts = append(attempts, name)
			continue
		}
		if !IsTempName(name) {
			continue
		}
		fi, err := d.Lstat(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !fi.Mode().IsRegular() || !fi.ModTime().Before(cutoff) {
			continue
		}
		if err := d.Unlink(name); err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
			continue
		}
		removed = append(removed, name)
	}
	return removed, attempts, errs, nil
}

// sweepFinishedRuns removes those of the .run-N directories runs of dir
// that its terminal status has left behind (see SweepTemps): N no later
// than the attempt the status names, empty, and neither it nor status.json
// modified since cutoff. The rmdir fails on a directory that is not empty,
// which is left as it is. A job that is not finished, or whose status
// cannot be read, keeps them all: that is no failure of the sweep.
func sweepFinishedRuns(op string, dir JobDir, runs []string, cutoff time.Time) (removed []string) {
	jd, err := openJobDir(op, dir)
	if err != nil {
		return nil
	}
	defer jd.Close()
	var st *JobStatus
	found, err := readTolerant(op, jd, jobRecord(dir, StatusFile), newReadOptions(nil), func(b []byte) (err error) {
		st, _, err = decodeStatus(b, statusSchema())
		return err
	})
	if err != nil || !found || (st.JobID != "" && st.JobID != dir.ID()) || !st.State.Terminal() {
		return nil
	}
	if fi, err := jd.Lstat(StatusFile); err != nil || !fi.ModTime().Before(cutoff) {
		return nil
	}
	for _, name := range runs {
		if n, _, _ := attempt.Parse(name); n > st.Attempt {
			continue
		}
		if fi, err := jd.Lstat(name); err != nil || !fi.IsDir() || !fi.ModTime().Before(cutoff) {
			continue
		}
		if err := jd.RemoveDir(name); err == nil {
			removed = append(removed, name)
		}
	}
	return removed
}

// sweepRoot removes what interrupted writers left in the jobs root: temp
// files (IsTempName: index.json's) last modified before cutoff; the build
// directories of createJob (in submitDir) in which nothing (the directory,
// or a file in it) has changed since cutoff, and those a sweep had taken
// (sweptPrefix) but not finished removing, at any age; and the hidden
// directories of removals that did not finish (removePrefix, see Remove)
// in which nothing has changed since cutoff, deleted as a Remove deletes
// them. A build directory is first renamed (taken, with a no-replace
// rename), then emptied and removed, so that a Submit that comes back
// publishes nothing rather than a half-emptied job. submitDir itself stays.
// It returns the names removed (a build's as submitDir/name), and the
// failures to remove one (each an *Error naming its path); err is for the
// root itself.
//
// root is opened as a directory, following links above and at root (the
// caller's choice, as for every root), never as a job directory; nothing
// below it is followed. Job directories are not its business: see
// removeLeftover and SweepTemps.
func sweepRoot(op, root string, cutoff time.Time) (removed []string, errs []error, err error) {
	rd, err := openDirAt(op, recordAt{dir: root})
	if err != nil {
		return nil, nil, err
	}
	defer rd.Close()
	names, err := rd.Names()
	if err != nil {
		return nil, nil, errIO(op, root, err, "cannot read the jobs root", "check the path and permissions")
	}
	for _, name := range names {
		if name == submitDir {
			r, e := sweepBuilds(op, rd, cutoff)
			removed, errs = append(removed, r...), append(errs, e...)
			continue
		}
		var err error
		switch {
		case IsTempName(name):
			var fi fs.FileInfo
			if fi, err = rd.Lstat(name); err != nil || !fi.Mode().IsRegular() || !fi.ModTime().Before(cutoff) {
				break
			}
			err = rd.Unlink(name)
		case strings.HasPrefix(name, removePrefix):
			if !abandoned(rd, name, cutoff) {
				continue
			}
			err = purgeHidden(rd, name) // nobody publishes it again: no need to take it first
		default:
			continue
		}
		removed, errs = swept(op, rd, name, err, removed, errs)
	}
	return removed, errs, nil
}

// sweepBuilds is sweepRoot's sweep of the root rd's submitDir.
func sweepBuilds(op string, rd *fsys.Dir, cutoff time.Time) (removed []string, errs []error) {
	sd, err := rd.OpenDir(submitDir)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, errIO(op, rd.Join(submitDir), err, "cannot open the directory in which jobs are built",
				"if it is not a directory (a file or a link), remove it"))
		}
		return nil, errs
	}
	defer sd.Close()
	names, err := sd.Names()
	if err != nil {
		return nil, []error{errIO(op, sd.Path(), err, "cannot read the directory in which jobs are built", "check its permissions")}
	}
	for _, name := range names {
		var err error
		switch {
		case strings.HasPrefix(name, sweptPrefix):
			err = removeBuildDir(sd, name)
		case abandoned(sd, name, cutoff):
			taken := sweptPrefix + strconv.FormatUint(rand.Uint64(), 10)
			if err = sd.RenameDirNoReplace(name, taken); err == nil {
				err = removeBuildDir(sd, taken)
			}
		default:
			continue
		}
		removed, errs = swept(op, sd, name, err, removed, errs)
	}
	for i, name := range removed {
		removed[i] = filepath.Join(submitDir, name)
	}
	return removed, errs
}

// swept adds name, a hidden entry of d that a sweep tried to remove, to
// removed, or err to errs unless the entry was gone meanwhile (published,
// or another sweep's).
func swept(op string, d *fsys.Dir, name string, err error, removed []string, errs []error) ([]string, []error) {
	switch {
	case err == nil:
		removed = append(removed, name)
	case !errors.Is(err, fs.ErrNotExist):
		errs = append(errs, errIO(op, d.Join(name), err, "cannot remove what an interrupted write left in the jobs root",
			"check the permissions of the jobs root; the entry is safe to remove by hand once it is older than "+DefaultSweepAge.String()))
	}
	return removed, errs
}

// abandoned reports whether the build directory name in rd is a real
// directory in which nothing has changed since cutoff: neither its entries
// (its own modification time) nor any file's contents. A Submit at work
// changes one or the other at every step.
func abandoned(rd *fsys.Dir, name string, cutoff time.Time) bool {
	d, _, ok := unchangedSince(rd, name, cutoff, func(string, fs.FileInfo) bool { return true })
	d.Close()
	return ok
}

// unchangedSince opens the directory name of rd (a real directory, never a
// link) if neither it (its entries) nor any entry in it (its contents) was
// modified since cutoff, and every entry passes accept. It returns the
// open directory, which the caller closes, and its entries; ok is false,
// and nothing is open (d is nil), otherwise.
func unchangedSince(rd *fsys.Dir, name string, cutoff time.Time, accept func(string, fs.FileInfo) bool) (d *fsys.Dir, names []string, ok bool) {
	fi, err := rd.Lstat(name)
	if err != nil || fi.Mode().Type() != fs.ModeDir || !fi.ModTime().Before(cutoff) {
		return nil, nil, false
	}
	if d, err = rd.OpenDir(name); err != nil {
		return nil, nil, false
	}
	if names, err = d.Names(); err == nil {
		ok = true
		for _, n := range names {
			if fi, err := d.Lstat(n); err != nil || !fi.ModTime().Before(cutoff) || !accept(n, fi) {
				ok = false
				break
			}
		}
	}
	if !ok {
		d.Close()
		return nil, nil, false
	}
	return d, names, true
}

// removeLeftover removes the directory id of the jobs root, which the
// caller found without job.json, if it is what an interrupted WriteSpec of
// an older jobstore left: a real directory holding no job.json and
// nothing but temp files (IsTempName, regular files), with neither it nor
// any of them modified since cutoff. It reports whether it removed it. The
// final rmdir fails on a directory that is not empty, so one that a writer
// has just started to fill stays; a job directory whose build was renamed
// over it meanwhile holds records and stays too. Callers must know root
// to be a jobs root (it holds jobs): elsewhere an old empty directory is
// someone's.
func removeLeftover(root, id string, cutoff time.Time) bool {
	rd, err := openDirAt("sweep", recordAt{dir: root})
	if err != nil {
		return false
	}
	defer rd.Close()
	d, names, ok := unchangedSince(rd, id, cutoff, func(n string, fi fs.FileInfo) bool {
		return IsTempName(n) && fi.Mode().IsRegular() // job.json is no temp file
	})
	if !ok {
		return false
	}
	for _, n := range names {
		if err := d.Unlink(n); err != nil && !errors.Is(err, fs.ErrNotExist) {
			d.Close()
			return false
		}
	}
	d.Close() // on Windows an open directory cannot be removed
	return rd.RemoveDir(id) == nil
}

// purgeHidden deletes the hidden directory name of rd, never through a
// link: job.json first (a reader that opened the job directory before the
// rename and then misses a record finds job.json gone too, and takes the
// job for removed), status.json last, everything else in between; then the
// directory. Gone already (another process finished it) is not an error.
//
// A round that leaves the directory not empty (a process that held it open
// before the rename wrote into it) is tried again at once, purgeRounds
// times in all. A network filesystem's client may, for a moment after the
// rename, not find the directory under its new name, or find a name it
// lists already gone (ENOENT), or hold a stale handle of it (ESTALE), as
// GlusterFS clients do while another client lists the root (for how long:
// docs/benchmarks.md#glusterfs-how-long-a-client-lags).
// Such a round, and a round that still finds the directory not empty after
// that, is tried again, paced as a stale read is (staleRetry), for up to
// staleRetryFor. The directory counts as gone only when its removal says so
// or it cannot be found after a failed round.
func purgeHidden(rd *fsys.Dir, name string) error {
	var stale staleRetry
	for round := 1; ; round++ {
		err := purgeRound(rd, name)
		switch {
		case err == nil:
			return nil
		case !fsys.IsDirNotEmpty(err) && !fsys.IsStaleHandle(err) && !errors.Is(err, fs.ErrNotExist):
			return err
		case round < purgeRounds && fsys.IsDirNotEmpty(err):
			continue
		case !stale.wait():
			return err
		}
	}
}

// purgeRound empties the hidden directory name of rd and removes it.
func purgeRound(rd *fsys.Dir, name string) error {
	err := emptyHidden(rd, name)
	if err == nil {
		atRemoveSeam("emptied", rd.Join(name))
		err = fsys.RetryBusy(func() error { return rd.RemoveDir(name) })
	}
	if errors.Is(err, fs.ErrNotExist) {
		if _, lerr := rd.Lstat(name); errors.Is(lerr, fs.ErrNotExist) {
			return nil // gone: another process finished it
		}
	}
	return err
}

// purgeRounds bounds how often purgeHidden empties at once a hidden
// directory that was refilled meanwhile (a process that held it open before
// the rename).
const purgeRounds = 3

// emptyHidden removes every name in the hidden directory name of rd, in
// purgeHidden's order.
func emptyHidden(rd *fsys.Dir, name string) error {
	d, err := rd.OpenDir(name)
	if err != nil {
		return err
	}
	defer d.Close() // before rd removes it: on Windows the handle pins it
	remove := func(n string) error {
		err := d.RemoveAll(n)
		atRemoveSeam("deleted", d.Join(n))
		return err
	}
	if err := remove(SpecFile); err != nil {
		return err
	}
	names, err := d.Names()
	errs := []error{err}
	for _, n := range names {
		if n != SpecFile && n != StatusFile {
			errs = append(errs, remove(n))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return remove(StatusFile)
}

// removeSeam, when set (by tests only), runs at the named steps of a
// removal: "claimed" (the next attempt claimed, the job directory at its
// path), "hidden" (renamed and the root fsynced, nothing deleted yet),
// "deleted" (one name in the hidden directory deleted, path naming it) and
// "emptied" (the hidden directory emptied, before it is removed); path is
// the job directory, or the hidden directory.
var removeSeam atomic.Pointer[func(step, path string)]

func atRemoveSeam(step, path string) {
	if h := removeSeam.Load(); h != nil {
		(*h)(step, path)
	}
}
