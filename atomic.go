package jobstore

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"time"

	"github.com/axqua/jobstore/internal/attempt"
	"github.com/axqua/jobstore/internal/fsys"
)

// WriteJSONAtomic writes v as JSON to path, replacing any previous file
// atomically and durably.
//
// v is marshalled once, before anything is touched: 2-space indent, a
// trailing newline, no HTML escaping; an encoding longer than DefaultMaxSize
// is ErrTooLarge (the readers would refuse it), and nothing is touched. Then
// path's directory is opened, a temp file is created in it (named "." + base
// + random digits, see IsTempName), written, fsynced and closed, renamed over
// path, and the directory is fsynced (writeRecord, the one write protocol of
// the package).
//
// What others may see: a concurrent reader opens either the previous file or
// the new one, complete; never a missing, empty or partial file. After a
// crash at any instant, path holds the previous record or the new one, and
// if WriteJSONAtomic returned nil, the new one (unless NoSync was given).
//
// On failure nothing at path changed, the temp file is removed, and the error
// is an *Error whose Op names the failed step ("open directory", "create
// temp file", "write", "fsync", "close", "rename", "fsync directory") and
// which unwraps to the OS error (errors.Is(err, syscall.ENOSPC) works). A
// failed fsync is never retried: after one, Linux may report the next as a
// success with the data lost. The one exception to "nothing changed": if
// only the directory fsync fails (EIO), the new file is already in place;
// the error says so. A directory fsync that the filesystem does not support
// (EINVAL, ENOTSUP) is not an error.
//
// path's directory may be reached through symbolic links (it is the
// caller's choice); the temp file is created, and the rename done, relative
// to that open directory, so a rename of the directory meanwhile cannot
// send them elsewhere. A symbolic link at path itself is replaced, never
// followed.
//
// On Windows, the replace is MoveFileEx(REPLACE_EXISTING|WRITE_THROUGH);
// while another process holds path open it falls back to a POSIX-semantics
// rename (which succeeds where every reader shares delete, as this
// package's readers do) and retries for WithReplaceTimeout (2 s by default)
// while a reader holds path open without FILE_SHARE_DELETE (every Go
// os.Open, most readers); directories are not fsynced, as Windows cannot.
// On platforms without the primitives (js/wasm, wasip1, plan9) every write
// fails with errors.ErrUnsupported.
func WriteJSONAtomic(path string, v any, opts ...WriteOption) error {
	data, err := encodeRecord("marshal", path, "", "cannot encode the value as JSON",
		"pass a value that encoding/json can marshal (no NaN, channels or functions)", v)
	if err != nil {
		return err
	}
	return writeRecord(pathRecord(path), data, newWriteOptions(opts), replaceTarget)
}

// encodeRecord is what every writer does before it touches anything:
// marshalRecord, with the error named for op and path: ErrTooLarge as it
// is, any other encoding failure ErrInvalid (subject, msg and remedy say
// which record and what to do).
func encodeRecord(op, path, subject, msg, remedy string, v any) ([]byte, error) {
	data, err := marshalRecord(v)
	if errors.Is(err, ErrTooLarge) {
		return nil, withPath(err, op, path)
	}
	if err != nil {
		return nil, errMalformed(op, path, subject, err, msg, remedy)
	}
	return data, nil
}

// marshalRecord is the file format's JSON layout. A record longer than
// DefaultMaxSize is ErrTooLarge: the readers would refuse it.
func marshalRecord(v any) ([]byte, error) {
	data, err := encodeJSON(v, "  ")
	if err == nil && len(data) > DefaultMaxSize {
		return nil, tooLargeToWrite(len(data), DefaultMaxSize)
	}
	return data, err
}

// publishMode is how the protocol's last step gives the temp file its name.
type publishMode int

const (
	replaceTarget publishMode = iota // status.json, index.json: the last write wins
	createOnly                       // job.json: written once; a taken name is ErrExists
)

// protocolDir is what the write protocol needs of the directory it writes
// in: an *fsys.Dir (see there for each primitive's contract on each
// platform), or a Run's claim (attempt.Claim), whose temp files are made in
// its attempt directory and renamed from there, so that a fenced runner's
// write fails at the rename.
type protocolDir interface {
	CreateTemp(name string, perm fs.FileMode) (fsys.File, string, error)
	Join(tmp string) string
	Unlink(tmp string) error
	Replace(tmp, name string, writeThrough bool, timeout time.Duration) error
	PublishNew(tmp, name string, writeThrough bool) (linked bool, err error)
	Sync() error
	ReplaceFailure(name string, err error) (msg, remedy string)
}

var (
	_ protocolDir = (*fsys.Dir)(nil)
	_ protocolDir = (*attempt.Claim)(nil)
)

// writeRecord is the write protocol, the only one in the package: every
// writer on every platform goes through it, and each step's failure is
// reported here, by the step that failed.
//
//  1. open the directory (a job directory never through a link)
//  2. create the temp file in it: "." + name + digits, exclusive
//  3. write the data
//  4. fsync the temp file (unless NoSync); a failed fsync is never retried
//  5. close it
//  6. publish: rename over the target, or take the name only if it is free
//  7. fsync the directory (unless NoSync)
//
// A failure before step 6 removes the temp file and leaves the target as it
// was. The temp file is made and named relative to the directory opened in
// step 1, so the whole sequence acts on one directory even if its path is
// renamed or replaced by a link meanwhile.
func writeRecord(at recordAt, data []byte, o writeOptions, mode publishMode) error {
	if err := checkWriteOptions(at, o); err != nil {
		return err
	}
	d, err := openDirAt("open directory", at)
	if err != nil {
		return err
	}
	defer d.Close()
	return writeRecordIn(d, at, data, o, mode, nil)
}

// checkWriteOptions refuses options no write can use, before anything is
// touched.
func checkWriteOptions(at recordAt, o writeOptions) error {
	if o.replaceTimeout < 0 {
		return errInvalid("write", at.full(), invalid{subject: "replace timeout", found: o.replaceTimeout.String(), supported: "0 or more", msg: "must be 0 or more, got " + o.replaceTimeout.String(), remedy: "pass WithReplaceTimeout a duration of 0 or more"})
	}
	return nil
}

// writeRecordIn is steps 2 to 7 of writeRecord in the directory d, which
// the caller opened on at.dir (or holds: a Run's claim). If written is not
// nil, it is set to the identity of the file published (the temp file, now
// at.name), so that its writer can tell later whether another writer has
// replaced it.
func writeRecordIn(d protocolDir, at recordAt, data []byte, o writeOptions, mode publishMode, written *fsys.ID) error {
	if mode == replaceTarget && runtime.GOOS == "windows" {
		// Windows never replaces a read-only file: a record that is rewritten
		// keeps the owner's write bit there, or the next write would fail.
		o.perm |= 0o200
	}
	f, tmp, err := d.CreateTemp(at.name, o.perm)
	var nr *fsys.NotRegularError
	if errors.As(err, &nr) { // the directory was swapped for a link meanwhile
		return irregular("create temp file", at.dir, nr)
	}
	if err != nil {
		return stepError("create temp file", at.full(), err, "cannot create the temp file in the record's directory", "")
	}
	fail := func(op string, err error, msg string) error {
		_ = d.Unlink(tmp) // the error that matters is the step's
		return stepError(op, d.Join(tmp), err, msg, "")
	}
	if err := writeAll(f, data); err != nil {
		_ = f.Close()
		return fail("write", err, "cannot write the temp file")
	}
	if written != nil {
		if *written, err = fsys.FileID(f); err != nil {
			_ = f.Close()
			return fail("fstat", err, "cannot identify the temp file")
		}
	}
	if !o.noSync {
		if err := f.Sync(); err != nil {
			_ = f.Close()
			return fail("fsync", err, "the disk did not confirm the temp file (not retried: a second fsync can claim success after losing the data)")
		}
	}
	if err := f.Close(); err != nil {
		return fail("close", err, "cannot close the temp file")
	}
	if err := publish(d, at, tmp, mode, !o.noSync, o.replaceTimeout); err != nil {
		return err
	}
	if o.noSync {
		return nil
	}
	if err := d.Sync(); err != nil {
		return stepError("fsync directory", at.dir, err,
			at.name+" is in place and visible, but the directory was not confirmed on disk, so the change may not survive a power cut",
			"check the disk and filesystem, then write the record again")
	}
	return nil
}

// publish is step 6 of writeRecord; the temp file is removed after a
// failure.
func publish(d protocolDir, at recordAt, tmp string, mode publishMode, writeThrough bool, timeout time.Duration) error {
	if mode == replaceTarget {
		if err := d.Replace(tmp, at.name, writeThrough, timeout); err != nil {
			_ = d.Unlink(tmp)
			msg, remedy := d.ReplaceFailure(at.name, err)
			return stepError("rename", at.full(), unwrapPath(err), msg, remedy)
		}
		return nil
	}
	linked, err := d.PublishNew(tmp, at.name, writeThrough)
	if err != nil {
		_ = d.Unlink(tmp)
		if errors.Is(err, fs.ErrExist) {
			return errExists("publish", at.full(), unwrapPath(err))
		}
		return stepError("publish", at.full(), unwrapPath(err), "cannot give the temp file the record's name", "")
	}
	if linked {
		if err := d.Unlink(tmp); err != nil {
			return stepError("remove temp file", d.Join(tmp), err, "the record is in place, but its temp name could not be removed",
				"remove the file by hand; it is a second name of the record")
		}
	}
	return nil
}

// unwrapPath is err without an *fs.PathError or *os.LinkError around it:
// the protocol's own error names the path.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// writeAll writes all of data (a short write without an error is
// io.ErrShortWrite).
func writeAll(f fsys.File, data []byte) error {
	for len(data) > 0 {
		n, err := f.Write(data)
		if err != nil {
			return err
		}
		if n == 0 {
			return io.ErrShortWrite
		}
		data = data[n:]
	}
	return nil
}

// dirPerm is the mode of every directory jobstore makes, less the umask, as
// mkdir(1) makes them: a umask of 002 makes them group-writable, which a
// root that several users write to needs (docs/guarantees.md).
const dirPerm = 0o777

// mkdirDurable creates dir (and missing parents) and syncs each parent, so
// the new directory entries survive a power cut. An existing directory is
// not an error; its parent is synced all the same, since an earlier creator
// may have crashed before doing so. A link named dir is ErrNotRegular.
func mkdirDurable(dir string) error {
	const op = "create directory"
	err := os.Mkdir(dir, dirPerm)
	if errors.Is(err, fs.ErrNotExist) {
		if perr := mkdirDurable(filepath.Dir(dir)); perr != nil {
			return perr
		}
		err = os.Mkdir(dir, dirPerm)
	}
	if err != nil && !errors.Is(err, fs.ErrExist) {
		return stepError(op, dir, err, "cannot create the job directory", "check that the root exists and is writable")
	}
	if err != nil {
		fi, serr := os.Lstat(dir)
		switch {
		case serr == nil && fi.Mode().Type() != fs.ModeDir && fi.Mode().Type() != 0:
			return irregular(op, dir, &fsys.NotRegularError{Mode: fi.Mode()})
		case serr != nil || !fi.IsDir():
			return stepError(op, dir, syscall.ENOTDIR, "exists and is not a directory", "remove or rename that file, or choose another job ID")
		}
	}
	parent := pathRecord(dir)
	d, err := openDirAt(op, recordAt{dir: parent.dir})
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return stepError("fsync directory", parent.dir, err,
			"the directory "+parent.name+" exists, but its parent was not confirmed on disk, so it may not survive a power cut",
			"check the disk and filesystem, then write again")
	}
	return nil
}
