package jobstore

import (
	"errors"
	"io/fs"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/axqua/jobstore/internal/fsys"
)

// Building a job whole: its records written in a directory of the root's
// hidden .submit, then renamed into the root in one step (createJob), for
// Submit and for WriteSpec of a job directory that does not exist yet.

// builtRecord is a record createJob writes into the job it builds.
type builtRecord struct {
	name string
	data []byte
	o    writeOptions
	mode publishMode
}

// createJob makes the job directory dir, which must not exist, holding
// recs, whole or not at all:
//
//  1. open dir's parent (the root; created durably if missing, and reached
//     through links if its path has them: the caller's choice);
//  2. refuse an ID that is taken (jobNameTaken): nothing is touched;
//  3. create a build directory in the root's submitDir (made if missing;
//     both opened relative to their parent, never through a link), and
//     write each record into it with the write protocol (each file
//     fsynced), then fsync the build directory once;
//  4. rename it to dir's name in the root without replacing anything
//     (RenameDirNoReplace); an empty directory there is no job and gives way
//     (jobNameTaken); any other is ErrExists, and the build directory is
//     removed;
//  5. fsync submitDir and the root, so that the new name survives a power
//     cut.
//
// A crash or a failure at any step before 4 leaves no job directory, only
// the build directory (removed on failure; after a crash, by sweepRoot once
// it is older than DefaultSweepAge). noSync skips step 5 (the records'
// options say whether they are fsynced).
func createJob(op string, dir JobDir, recs []builtRecord, noSync bool) error {
	root, id := filepath.Dir(string(dir)), dir.ID()
	for _, r := range recs {
		if err := checkWriteOptions(jobRecord(dir, r.name), r.o); err != nil {
			return err
		}
	}
	rd, err := openRoot(op, root)
	if err != nil {
		return err
	}
	defer rd.Close()
	if err := jobNameTaken(op, rd, dir); err != nil {
		return err
	}
	sd, err := openSubmitDir(rd)
	if err != nil {
		return err
	}
	defer sd.Close()
	build, err := buildJob(op, sd, dir, recs)
	if err != nil {
		return err
	}
	if err := publishJob(op, rd, sd, build, dir); err != nil {
		return err
	}
	if noSync {
		return nil
	}
	return syncPublished(rd, sd, "the job "+id+" is in place and visible",
		"check the disk and filesystem; the job exists, so do not submit it again")
}

// buildJob is step 3 of createJob for the job dir: it returns the name
// of the build directory in sd, whole, or an error, and then nothing is
// left of it.
func buildJob(op string, sd *fsys.Dir, dir JobDir, recs []builtRecord) (string, error) {
	build, err := mkdirBuild(sd, dir.ID())
	if err != nil {
		return "", err
	}
	if err := writeBuild(sd, build, recs); err != nil {
		_ = removeBuildDir(sd, build) // the error that matters is the write's
		return "", buildFailure(op, sd, build, dir, err)
	}
	return build, nil
}

// publishJob is step 4 of createJob: it renames build to dir's name in
// the root rd (removing build if it cannot) and marks the job live.
func publishJob(op string, rd, sd *fsys.Dir, build string, dir JobDir) error {
	if err := publishBuild(op, rd, sd, build, dir); err != nil {
		_ = removeBuildDir(sd, build)
		return err
	}
	atSubmitSeam("published", string(dir))
	markLive(rd, dir.ID()) // before the syncs: a waiting worker hears of the job as soon as it is in place
	atSubmitSeam("indexed", string(dir))
	return nil
}

// syncPublished is step 5 of createJob, for every job renamed from sd to
// rd since the last sync: what says what is in place, remedy what to do
// if the fsyncs fail.
func syncPublished(rd, sd *fsys.Dir, what, remedy string) error {
	// A rename from one directory to another is durable once both are
	// (POSIX promises nothing less; ext4 commits both in one transaction,
	// other filesystems need not).
	synced, err := sd.Path(), sd.Sync()
	if err == nil {
		synced, err = rd.Path(), rd.Sync()
	}
	if err != nil {
		return stepError("fsync directory", synced, err,
			what+", but the rename into the jobs root was not confirmed on disk, so it may not survive a power cut", remedy)
	}
	return nil
}

// openRoot opens the jobs root for createJob, creating it (and its
// parents, durably) if it is missing.
func openRoot(op, root string) (*fsys.Dir, error) {
	at := recordAt{dir: root} // not a job directory: links to it are the caller's
	rd, err := openDirAt(op, at)
	if errors.Is(err, fs.ErrNotExist) {
		if err := mkdirDurable(root); err != nil {
			return nil, err
		}
		rd, err = openDirAt(op, at)
	}
	return rd, err
}

// openSubmitDir opens the root rd's submitDir, never through a link,
// creating it if missing (only then: a mkdir per Submit would be one more
// round trip to a file server).
func openSubmitDir(rd *fsys.Dir) (*fsys.Dir, error) {
	sd, err := rd.OpenDir(submitDir)
	if errors.Is(err, fs.ErrNotExist) {
		if err := rd.Mkdir(submitDir, dirPerm); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, stepError("create directory", rd.Join(submitDir), err,
				"cannot create the directory in which jobs are built", "check free space and that this user may write in the jobs root; no job was made")
		}
		sd, err = rd.OpenDir(submitDir)
	}
	if err != nil {
		return nil, stepError("open directory", rd.Join(submitDir), err,
			"cannot open the directory in which jobs are built", "if it is not a directory (a file or a link), remove it; no job was made")
	}
	return sd, nil
}

// mkdirBuild creates a new build directory for job id in sd (the root's
// submitDir) and returns its name.
func mkdirBuild(sd *fsys.Dir, id string) (string, error) {
	for attempt := 0; ; attempt++ {
		name := id + "-" + strconv.FormatUint(rand.Uint64(), 10)
		err := sd.Mkdir(name, dirPerm)
		if err == nil {
			atSubmitSeam("mkdir", sd.Join(name))
			return name, nil
		}
		if !errors.Is(err, fs.ErrExist) || attempt >= 100 {
			return "", stepError("create directory", sd.Join(name), err,
				"cannot create the directory in which the job is built", "check free space and that this user may write in the jobs root; no job was made")
		}
	}
}

// writeBuild writes recs into the build directory build of sd, which it
// opens relative to sd and never through a link.
func writeBuild(sd *fsys.Dir, build string, recs []builtRecord) error {
	bd, err := sd.OpenDir(build)
	if err != nil {
		return stepError("open directory", sd.Join(build), err, "cannot open the directory in which the job is built", "")
	}
	defer bd.Close()
	// job.lock is made with the job, empty (a free lock), so that the first
	// Start adds no name to the job directory: a new name makes that
	// Start's durable write commit more. The build directory's fsync makes
	// it durable; a job that lost it to a power cut gets it from LockJob.
	lock, err := bd.OpenLock(LockFile)
	if err != nil {
		return stepError("create lock file", bd.Join(LockFile), err, "cannot create the job's lock file", "")
	}
	if err := lock.Close(); err != nil {
		return stepError("close", bd.Join(LockFile), err, "cannot close the job's lock file", "")
	}
	// The records are written at once, each by the write protocol but for
	// the directory's fsync, made once when every name is in it: nothing
	// reads the build directory before its rename, so the order in which
	// its names reach the disk does not matter, as long as all of them do
	// before the rename can. Their fsyncs, issued together, are committed
	// together by a journaling filesystem.
	errs := make([]error, len(recs))
	var wg sync.WaitGroup
	durable := false
	for i, r := range recs {
		wg.Go(func() {
			at := recordAt{dir: bd.Path(), name: r.name, job: true}
			errs[i] = writeRecordIn(unsyncedDir{bd}, at, r.data, r.o, r.mode, nil)
		})
		durable = durable || !r.o.noSync
	}
	wg.Wait()
	for i, r := range recs {
		if errs[i] != nil {
			return errs[i]
		}
		atSubmitSeam(r.name, bd.Path())
	}
	if !durable {
		return nil
	}
	if err := bd.Sync(); err != nil {
		return stepError("fsync directory", bd.Path(), err, "the directory in which the job is built was not confirmed on disk", "")
	}
	return nil
}

// unsyncedDir is a build directory as writeBuild hands it to the write
// protocol: every step as the directory's, but the directory's fsync,
// which writeBuild makes once for all the records.
type unsyncedDir struct{ *fsys.Dir }

func (unsyncedDir) Sync() error { return nil }

// publishBuild renames the build directory build of sd to dir's name in
// the root rd, never over a job: a name taken by anything but an empty
// directory is ErrExists. An empty directory is no job (an interrupted
// WriteSpec of an older jobstore leaves one): it is removed and the rename
// tried once more, which is what rename(2) does by itself where there is no
// no-replace rename.
func publishBuild(op string, rd, sd *fsys.Dir, build string, dir JobDir) error {
	id := dir.ID()
	taken := func() bool { _, err := rd.Lstat(id); return err == nil }
	err := sd.MoveDirNoReplace(build, rd, id)
	if err != nil && taken() {
		if terr := jobNameTaken(op, rd, dir); terr != nil {
			return terr
		}
		if rerr := rd.RemoveDir(id); rerr == nil || errors.Is(rerr, fs.ErrNotExist) {
			err = sd.MoveDirNoReplace(build, rd, id)
		}
		if err != nil && taken() {
			if terr := jobNameTaken(op, rd, dir); terr != nil {
				return terr
			}
			return errExists(op, string(dir), err)
		}
	}
	if err != nil {
		return buildFailure(op, sd, build, dir, stepError("rename", sd.Join(build), err, "cannot rename the built job into place", ""))
	}
	return nil
}

// jobNameTaken returns ErrExists if dir's name in the root rd is taken by
// a job, a regular file or a directory that is not empty, ErrNotRegular if
// it is a symbolic link (never followed) or another special file, and nil
// if it is free (or an empty directory, which is no job and which
// createJob replaces).
func jobNameTaken(op string, rd *fsys.Dir, dir JobDir) error {
	fi, err := rd.Lstat(dir.ID())
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return stepError(op, string(dir), err, "cannot tell whether the job ID is taken", "check that this user may search the jobs root")
	case fi.Mode().IsRegular():
		return annotated(errExists(op, string(dir), fs.ErrExist), func(e *Error) {
			e.Msg = "the job ID is taken by " + fsys.DescribeType(fi.Mode())
			e.Remedy = "choose another job ID, or remove or rename the file"
		})
	case fi.Mode().Type() != fs.ModeDir:
		return irregular(op, string(dir), &fsys.NotRegularError{Mode: fi.Mode()})
	}
	d, err := rd.OpenDir(dir.ID())
	if err != nil {
		return errExists(op, string(dir), err)
	}
	defer d.Close()
	names, err := d.Names()
	switch {
	case err != nil:
		return errExists(op, string(dir), err)
	case len(names) == 0:
		return nil
	}
	if _, err := d.Lstat(SpecFile); errors.Is(err, fs.ErrNotExist) {
		return annotated(errExists(op, string(dir), fs.ErrExist), func(e *Error) {
			e.Msg = "the job ID is taken by a directory that holds no " + SpecFile +
				" (left by an interrupted write of an older jobstore, or by another program)"
			e.Remedy = "choose another job ID, or remove the directory once nothing writes in it " +
				"(jobstore reconcile removes one that holds nothing but temp files older than DefaultSweepAge)"
		})
	}
	return errExists(op, string(dir), fs.ErrExist)
}

// buildFailure tells err, a failure of createJob in its build directory,
// as what it means: no job was made. When the build directory is gone, a
// sweep took it for abandoned (nothing in it had changed for
// DefaultSweepAge), and the error says so.
func buildFailure(op string, sd *fsys.Dir, build string, dir JobDir, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		if _, serr := sd.Lstat(build); errors.Is(serr, fs.ErrNotExist) {
			return errBecause(op, string(dir), err,
				"the directory in which the job was built was removed meanwhile: a sweep removes one that has not changed for "+DefaultSweepAge.String(),
				"submit the job again (no job was made); if a step of a submit takes this long, check the disk")
		}
	}
	return annotated(err, func(e *Error) {
		e.Remedy = "no job " + dir.ID() + " was made; check free space, permissions and the disk, then submit it again"
	})
}

// submitSeam, when set (by tests only), runs after each step of createJob:
// "mkdir" (the build directory exists, empty), each record's name (written
// there), "published" (renamed into place, the root not yet fsynced); path
// is the build directory, or the job's once published.
var submitSeam atomic.Pointer[func(step, path string)]

func atSubmitSeam(step, path string) {
	if h := submitSeam.Load(); h != nil {
		(*h)(step, path)
	}
}

// removeBuildDir removes the directory name of rd and the files in it
// (never following a link: they are removed as names), the way a build
// directory is cleared. A directory in it is not removed, and makes the
// removal fail.
func removeBuildDir(rd *fsys.Dir, name string) error {
	var err error
	for range 3 { // a writer that still has the directory open may add a file
		if err = emptyDir(rd, name); err != nil {
			return err
		}
		atSweepSeam("emptied", rd.Join(name))
		if err = rd.RemoveDir(name); err == nil || errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return err
}

// emptyDir removes the names in the directory name of rd (never through a
// link at name).
func emptyDir(rd *fsys.Dir, name string) error {
	d, err := rd.OpenDir(name)
	if err != nil {
		return err
	}
	defer d.Close()
	names, err := d.Names()
	if err != nil {
		return err
	}
	for _, n := range names {
		if err := d.Unlink(n); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// sweepSeam, when set (by tests only), runs in removeBuildDir once the
// directory at path is emptied and before it is removed (step "emptied").
var sweepSeam atomic.Pointer[func(step, path string)]

func atSweepSeam(step, path string) {
	if h := sweepSeam.Load(); h != nil {
		(*h)(step, path)
	}
}
