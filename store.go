package jobstore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

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
	return encodeChecked(op, path, dir, spec.ID, spec.validate, "spec", "correct the spec's fields", spec)
}

// encodeChecked is the end of encodeSpec and encodeStatus: the stamped
// record v, whose job ID is id, is validated, must be dir's, and is
// encoded for path.
func encodeChecked(op, path string, dir JobDir, id string, validate func(op, path string) error, subject, remedy string, v any) ([]byte, error) {
	if err := validate(op, path); err != nil {
		return nil, err
	}
	if id != dir.ID() {
		return nil, errWrongJobID(op, path, id, dir)
	}
	return encodeRecord(op, path, subject, "cannot encode the record", remedy, v)
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
// first and refuses, with nothing written, a record whose seq is lower
// than the current one's (ErrInvalid, Subject "seq") or one that is not
// terminal over a terminal one (ErrWrongState: a finished job does not
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
	data, at, o, err := prepareStatus(op, dir, &st, opts)
	if err != nil {
		return err
	}
	d, err := openDirAt("open directory", at)
	if errors.Is(err, fs.ErrNotExist) {
		return errNoJobDir(op, dir)
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
	return encodeChecked(op, path, dir, st.JobID, st.validate, "status", "correct the status's fields", st)
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
		return errWrongState(op, dir.StatusPath(), invalid{found: string(next.State), supported: []State{Succeeded, Failed, Cancelled, Lost}, msg: fmt.Sprintf("the job is already %s (seq %d); a finished job does not become %s again", cur.State, cur.Seq, next.State), remedy: "submit a new job to run this work again"})
	}
	return nil
}

// writeStatusAs writes st through claim c, the Run's attempt (see
// attempt.Claim): stamped and checked as WriteStatus does, with the
// identity of the file published put in written.
func writeStatusAs(c protocolDir, dir JobDir, st JobStatus, written *fsys.ID, opts ...WriteOption) error {
	const op = "write status"
	data, at, o, err := prepareStatus(op, dir, &st, opts)
	if err != nil {
		return err
	}
	return writeRecordIn(c, at, data, o, replaceTarget, written)
}

// prepareStatus is what every write of status.json does before it touches
// anything: st stamped, checked and encoded (encodeStatus), and the write's
// options checked for dir's status.json.
func prepareStatus(op string, dir JobDir, st *JobStatus, opts []WriteOption) ([]byte, recordAt, writeOptions, error) {
	data, err := encodeStatus(op, dir, st)
	if err != nil {
		return nil, recordAt{}, writeOptions{}, err
	}
	at, o := jobRecord(dir, StatusFile), newWriteOptions(opts)
	if err := checkWriteOptions(at, o); err != nil {
		return nil, at, o, err
	}
	return data, at, o, nil
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
