package jobstore

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"

	"github.com/axqua/jobstore/internal/fsys"
)

// WriteSpec publishes job.json, the submission record, in dir.
//
// It stamps SchemaVersion, stamps SubmittedAt with Now() if zero, and
// validates: ID must be a valid job ID equal to dir's base name, Kind
// non-empty, Params valid JSON if set. It creates dir if needed (whole, see
// below), then publishes job.json only if it does not exist, atomically
// even when several processes race: the record is written and fsynced
// under a temp name, then given its name by a no-replace rename or link(2)
// (MoveFileEx without REPLACE_EXISTING on Windows). Exactly one racer wins;
// every other gets an *Error of kind ErrExists (which also matches
// fs.ErrExist), and the winner's file is untouched. The file is created
// read-only (0444, or WithPerm's read bits).
//
// A dir whose last element is not a job ID ("/", ".", "root/j/..", a
// dot-name) is ErrInvalid, Subject "job_id", before anything is touched.
// Invalid input is ErrInvalid with Subject naming the field, and a record
// whose encoding is longer than DefaultMaxSize is ErrTooLarge, both before
// anything is touched. If WriteSpec returns nil, job.json is complete and
// durable; if it returns an error, job.json is either absent or someone
// else's complete record, and no temp file is left.
//
// A dir that does not exist yet is made whole or not at all, as Submit
// makes a job (without the status): job.json is written in a hidden build
// directory of dir's parent (created, durably, if missing), the directory
// is renamed into place without replacing a job, and the parent is
// fsynced, so no crash or full disk leaves an empty dir behind; an ID
// taken meanwhile is ErrExists as above. A dir that exists (an empty
// directory made by the caller, say) gets job.json in place, its parent
// fsynced.
func WriteSpec(dir JobDir, spec JobSpec, opts ...WriteOption) error {
	const op = "write spec"
	if err := checkJobDir(op, dir); err != nil {
		return err
	}
	dir = dir.clean()
	data, err := encodeSpec(op, dir, spec)
	if err != nil {
		return err
	}
	o := newWriteOptions(opts).writeOnce()
	if _, err := os.Lstat(string(dir)); errors.Is(err, fs.ErrNotExist) {
		return createJob(op, dir, []builtRecord{{SpecFile, data, o, createOnly}}, o.noSync)
	}
	if err := mkdirDurable(string(dir)); err != nil {
		return err
	}
	return writeRecord(jobRecord(dir, SpecFile), data, o, createOnly)
}

// encodeSpec stamps, validates and encodes spec as job.json of dir.
func encodeSpec(op string, dir JobDir, spec JobSpec) ([]byte, error) {
	path := dir.SpecPath()
	spec.SchemaVersion = writeVersion(JobSchemaVersion, spec.schedules())
	if spec.SubmittedAt.IsZero() {
		spec.SubmittedAt = Now()
	}
	if err := spec.validate(op, path); err != nil {
		return nil, err
	}
	if spec.ID != dir.ID() {
		return nil, errWrongJobID(op, path, spec.ID, dir)
	}
	return encodeRecord(op, path, "spec", "cannot encode the record", "correct the spec's fields", spec)
}

// builtRecord is a record createJob writes into the job it builds.
type builtRecord struct {
	name string
	data []byte
	o    writeOptions
	mode publishMode
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

// createJob makes the job directory dir, which must not exist, holding
// recs, whole or not at all:
//
//  1. open dir's parent (the root; created durably if missing, and reached
//     through links if its path has them: the caller's choice);
//  2. refuse an ID that is taken (jobNameTaken): nothing is touched;
//  3. create a build directory in the root's submitDir (made if missing;
//     both opened relative to their parent, never through a link), and
//     write each record into it with the write protocol (each file
//     fsynced, then the build directory);
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
	build, err := mkdirBuild(sd, id)
	if err != nil {
		return err
	}
	if err := writeBuild(sd, build, recs); err != nil {
		_ = removeBuildDir(sd, build) // the error that matters is the write's
		return buildFailure(op, sd, build, dir, err)
	}
	if err := publishBuild(op, rd, sd, build, dir); err != nil {
		_ = removeBuildDir(sd, build)
		return err
	}
	atSubmitSeam("published", string(dir))
	markLive(rd, id) // before the syncs: a waiting worker hears of the job as soon as it is in place
	atSubmitSeam("indexed", string(dir))
	if noSync {
		return nil
	}
	// A rename from one directory to another is durable once both are
	// (POSIX promises nothing less; ext4 commits both in one transaction,
	// other filesystems need not).
	synced, err := sd.Path(), sd.Sync()
	if err == nil {
		synced, err = root, rd.Sync()
	}
	if err != nil {
		return stepError("fsync directory", synced, err,
			"the job "+id+" is in place and visible, but its rename into the jobs root was not confirmed on disk, so it may not survive a power cut",
			"check the disk and filesystem; the job exists, so do not submit it again")
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
	// Start's durable write commit more. The records' directory fsyncs make
	// it durable; a job that lost it to a power cut gets it from LockJob.
	lock, err := bd.OpenLock(LockFile)
	if err != nil {
		return stepError("create lock file", bd.Join(LockFile), err, "cannot create the job's lock file", "")
	}
	if err := lock.Close(); err != nil {
		return stepError("close", bd.Join(LockFile), err, "cannot close the job's lock file", "")
	}
	for _, r := range recs {
		if err := writeRecordIn(bd, recordAt{dir: bd.Path(), name: r.name, job: true}, r.data, r.o, r.mode, nil); err != nil {
			return err
		}
		atSubmitSeam(r.name, bd.Path())
	}
	return nil
}

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

// ReadSpec reads job.json from dir: a tolerant read (see ReadJSONTolerant),
// then migration in memory if the record is older than JobSchemaVersion (the
// file is never rewritten), then validation. A missing job.json (or dir) is
// an *Error of kind ErrNotJob, which also matches fs.ErrNotExist. A record
// from a newer jobstore is ErrNewerSchema. A job.json whose job_id is not
// dir's base name describes another job (a directory copied or renamed by
// hand): ErrInvalid, Subject "job_id", naming both IDs. A dir that is a
// symbolic link, and a job.json that is not a regular file, are
// ErrNotRegular, at once.
func ReadSpec(dir JobDir, opts ...ReadOption) (JobSpec, error) {
	return readSpec(dir.clean(), newReadOptions(opts), specSchema())
}

// readSpec is ReadSpec for a given schema (the tests' way to add a version).
func readSpec(dir JobDir, o readOptions, sch recordSchema) (JobSpec, error) {
	const op = "read spec"
	d, err := openJobDirToRead(op, dir)
	if err != nil {
		return JobSpec{}, err
	}
	defer d.Close()
	return readSpecIn(d, o, sch)
}

// readSpecIn is ReadSpec in the job directory d.
func readSpecIn(d *fsys.Dir, o readOptions, sch recordSchema) (JobSpec, error) {
	dir := jobDir(d)
	const op = "read spec"
	path := dir.SpecPath()
	var spec JobSpec
	found, err := readTolerant(op, d, jobRecord(dir, SpecFile), o, func(b []byte) (err error) {
		spec, _, err = decodeSpec(b, sch)
		return err
	})
	if err == nil && !found {
		err = errNotJob(op, dir)
	}
	if err != nil {
		return JobSpec{}, withPath(err, op, path)
	}
	if spec.ID != dir.ID() {
		return JobSpec{}, errWrongJobID(op, path, spec.ID, dir)
	}
	return spec, nil
}

// WriteStatus replaces status.json in dir atomically and durably (see
// WriteJSONAtomic for exactly what a concurrent reader and a crash may see,
// and for NoSync).
//
// It stamps SchemaVersion, JobID with dir's base name if empty, UpdatedAt
// with Now() if zero, and validates: State must be known, Progress nil or
// within [0, 1], JobID dir's base name, timestamps within years 1..9999.
// Invalid input is an *Error of kind ErrInvalid with Subject naming the
// field and Found its value, and a record whose encoding is longer than
// DefaultMaxSize is ErrTooLarge, both returned before anything is touched:
// the previous status.json stays byte-identical. A missing dir is
// ErrNotJob, and so is a dir without job.json when it has no status.json
// yet (the first write: nothing is created in a directory that is not a
// job); later writes do not look for job.json again, which would cost
// every update a stat.
//
// Records never go backwards: WriteStatus reads the current status.json
// first and refuses, with ErrInvalid and nothing written, a record whose seq
// is lower than the current one's (Subject "seq") or one that is not
// terminal over a terminal one (Subject "state": a finished job does not
// become unfinished). A current record that cannot be read (damaged, or
// from a newer jobstore) does not stop the write, so that it can be
// repaired.
//
// Writers of different jobs never wait for each other; two writers of the
// same job must be serialised by the caller (the runner's job.lock): the
// check above and the rename are two steps, and of two racing writers the
// last rename wins. A Run notices when a write that is not its own has
// replaced its record, and stops (ErrNotOwner) instead of overwriting it.
// A dir that is a symbolic link is ErrNotRegular: nothing is written
// through it. A dir whose last element is not a job ID ("/", ".",
// "root/j/..", a dot-name) is ErrInvalid, Subject "job_id", before anything
// is touched.
func WriteStatus(dir JobDir, st JobStatus, opts ...WriteOption) error {
	const op = "write status"
	if err := checkJobDir(op, dir); err != nil {
		return err
	}
	dir = dir.clean()
	data, err := encodeStatus(op, dir, &st)
	if err != nil {
		return err
	}
	at, o := jobRecord(dir, StatusFile), newWriteOptions(opts)
	if err := checkWriteOptions(at, o); err != nil {
		return err
	}
	d, err := openDirAt("open directory", at)
	if errors.Is(err, fs.ErrNotExist) {
		return errNotJob(op, dir)
	}
	if err != nil {
		return err
	}
	defer d.Close()
	if err := noStepBack(op, d, &st); err != nil {
		return err
	}
	return writeRecordIn(d, at, data, o, replaceTarget, nil)
}

// encodeStatus stamps and validates st for dir, and encodes it: what every
// writer of status.json does before it touches anything.
func encodeStatus(op string, dir JobDir, st *JobStatus) ([]byte, error) {
	path := dir.StatusPath()
	st.SchemaVersion = writeVersion(StatusSchemaVersion, st.retries())
	if st.JobID == "" {
		st.JobID = dir.ID() // pollers that see only the file still know whose it is
	}
	if st.UpdatedAt.IsZero() {
		st.UpdatedAt = Now()
	}
	if err := st.validate(op, path); err != nil {
		return nil, err
	}
	if st.JobID != dir.ID() {
		return nil, errWrongJobID(op, path, st.JobID, dir)
	}
	return encodeRecord(op, path, "status", "cannot encode the record", "correct the status's fields", st)
}

// noStepBack refuses next if it would take the job backwards from the
// status.json in d: a lower seq, or an unfinished state over a finished one.
// Where there is no status.json yet (the first write), d must be a job: a
// directory without job.json is ErrNotJob. Later writes do not look again,
// so that they cost no more than the read they make anyway.
func noStepBack(op string, d *fsys.Dir, next *JobStatus) error {
	dir := jobDir(d)
	cur, err := readStatusIn(d, newReadOptions(nil), statusSchema())
	if err == nil && cur == nil {
		if _, serr := d.Lstat(SpecFile); errors.Is(serr, fs.ErrNotExist) {
			return errNotJob(op, dir)
		}
	}
	if err != nil || cur == nil {
		return nil // nothing to go back from, or nothing readable: a repair may replace it
	}
	switch {
	case next.Seq < cur.Seq:
		return errInvalid(op, dir.StatusPath(), invalid{subject: "seq", found: next.Seq, supported: fmt.Sprintf("%d or more", cur.Seq), msg: fmt.Sprintf("%d is lower than the current record's %d (%s): a poller would take it for an older record", next.Seq, cur.Seq, cur.State), remedy: "read the status and write one more than its seq"})
	case cur.State.Terminal() && !next.State.Terminal():
		return errInvalid(op, dir.StatusPath(), invalid{subject: "state", found: string(next.State), supported: []State{Succeeded, Failed, Cancelled, Lost}, msg: fmt.Sprintf("the job is already %s (seq %d); a finished job does not become %s again", cur.State, cur.Seq, next.State), remedy: "submit a new job to run this work again"})
	}
	return nil
}

// writeStatusAs writes st through claim c, the Run's attempt (see
// attempt.Claim): stamped and checked as WriteStatus does, with the
// identity of the file published put in written.
func writeStatusAs(c protocolDir, dir JobDir, st JobStatus, written *fsys.ID, opts ...WriteOption) error {
	const op = "write status"
	data, err := encodeStatus(op, dir, &st)
	if err != nil {
		return err
	}
	at, o := jobRecord(dir, StatusFile), newWriteOptions(opts)
	if err := checkWriteOptions(at, o); err != nil {
		return err
	}
	return writeRecordIn(c, at, data, o, replaceTarget, written)
}

// ReadStatus reads status.json from dir: a tolerant read (see
// ReadJSONTolerant), then migration in memory if the record is older than
// StatusSchemaVersion (never written back), then validation.
//
// It returns nil, nil when the job exists but status.json does not yet
// ("nothing has run yet"), and an *Error of kind ErrNotJob when dir has no
// job.json or does not exist. A status.json whose job_id is set and is not
// dir's base name is ErrInvalid, Subject "job_id", naming both IDs (an empty
// job_id, which older writers may leave, is read as dir's). It never
// writes, renames, chmods or removes
// anything. When the record is current (the usual case) it costs one JSON
// parse. A dir that is a symbolic link, and a status.json that is not a
// regular file (a link, a FIFO, a socket, a device), are ErrNotRegular, at
// once: the reader never follows the link nor blocks on the file.
func ReadStatus(dir JobDir, opts ...ReadOption) (*JobStatus, error) {
	const op = "read status"
	dir = dir.clean()
	d, err := openJobDirToRead(op, dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	st, err := readStatusIn(d, newReadOptions(opts), statusSchema())
	if err == nil {
		if _, serr := d.Lstat(SpecFile); errors.Is(serr, fs.ErrNotExist) {
			return nil, errNotJob(op, dir)
		}
	}
	return st, err
}

// readStatusIn is ReadStatus in the job directory d, for a given schema,
// without the check that job.json exists (List has just read it): nil, nil
// when status.json is absent.
func readStatusIn(d *fsys.Dir, o readOptions, sch recordSchema) (*JobStatus, error) {
	dir := jobDir(d)
	const op = "read status"
	var st *JobStatus
	found, err := readTolerant(op, d, jobRecord(dir, StatusFile), o, func(b []byte) (err error) {
		st, _, err = decodeStatus(b, sch)
		return err
	})
	if err != nil {
		return nil, withPath(err, op, dir.StatusPath())
	}
	if !found {
		return nil, nil
	}
	if st.JobID != "" && st.JobID != dir.ID() {
		return nil, errWrongJobID(op, dir.StatusPath(), st.JobID, dir)
	}
	return st, nil
}
