package jobstore

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"time"
)

// WriteOption changes how a record is written.
type WriteOption func(*writeOptions)

type writeOptions struct {
	noSync         bool
	perm           fs.FileMode
	replaceTimeout time.Duration
}

func newWriteOptions(opts []WriteOption) writeOptions {
	o := writeOptions{perm: 0o644, replaceTimeout: DefaultReplaceTimeout}
	for _, f := range opts {
		f(&o)
	}
	return o
}

// NoSync skips both fsyncs (of the file and of its directory). The replace
// stays atomic: a reader sees the old record or the new one, never a mix,
// and a crash of the writing process changes nothing of that. A power cut
// or kernel crash may: afterwards the file may hold an earlier record, or,
// on filesystems that can commit the rename before the data (XFS; ext4
// mounted noauto_da_alloc), be empty or NUL-filled, which readers report as
// ErrCorrupt. Use it for high-rate progress updates whose loss costs
// nothing; never for a terminal state.
func NoSync() WriteOption { return func(o *writeOptions) { o.noSync = true } }

// WithPerm sets the new file's permission bits (default 0644; the umask
// applies). Pollers often run as another user: keep the file readable. For
// job.json the write bits are dropped, since it is read-only. On Windows
// only the owner's write bit means anything (without it the file is
// read-only, and Windows never replaces a read-only file), so a record that
// is rewritten (status.json) keeps it there.
func WithPerm(perm fs.FileMode) WriteOption {
	return func(o *writeOptions) { o.perm = perm & fs.ModePerm }
}

// DefaultReplaceTimeout is how long a replace keeps trying on Windows while
// another process holds the record open (WithReplaceTimeout).
const DefaultReplaceTimeout = 2 * time.Second

// WithReplaceTimeout sets how long a replace keeps trying while another
// process holds the record open in a way that forbids it (default
// DefaultReplaceTimeout; 0 tries once). It has an effect on Windows only:
// elsewhere a rename never waits for readers. A negative d is ErrInvalid,
// reported by the write before anything is touched.
func WithReplaceTimeout(d time.Duration) WriteOption {
	return func(o *writeOptions) { o.replaceTimeout = d }
}

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
		return nil, errMalformed(op, path, subject, msg, remedy, err)
	}
	return data, nil
}

// marshalRecord is the file format's JSON layout. A record longer than
// DefaultMaxSize is ErrTooLarge: the readers would refuse it.
func marshalRecord(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil { // Encode ends the value with '\n'
		return nil, err
	}
	if buf.Len() > DefaultMaxSize {
		return nil, tooLargeToWrite(buf.Len())
	}
	return buf.Bytes(), nil
}

// IsTempName reports whether a file name is one of this package's temp
// files: "." + a target's base name + decimal digits (renameio's naming,
// used on every platform), e.g. ".status.json8674665223082153551". A
// directory scan must skip these; SweepTemps-style cleaners may remove them
// once they are old, never while a writer may still hold them.
func IsTempName(name string) bool {
	name = filepath.Base(name)
	for _, target := range tempTargets {
		p := "." + target
		if len(name) > len(p) && name[:len(p)] == p && allDigits(name[len(p):]) {
			return true
		}
	}
	return false
}

// tempTargets are the records whose temp files IsTempName recognises.
var tempTargets = [...]string{SpecFile, StatusFile, CancelFile, "index.json", ownerFile}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return len(s) > 0
}

// recordAt names a record file: the directory that holds it and its name
// there.
type recordAt struct {
	dir, name string
	// job: dir is a job directory, which must be a directory itself and is
	// never reached through a symbolic link at its own name (a link there
	// could lead out of the root). The path above it (the root) is the
	// caller's choice and may hold links.
	job bool
	// sub, if set, is a subdirectory of dir (one name) that holds the temp
	// file: a Run's attempt directory (.run-N). The temp file is then
	// renamed from sub by its path relative to dir, which is resolved again
	// at the rename, never through a descriptor of sub: once sub has been
	// renamed away (the attempt fenced), the create or the rename fails with
	// ENOENT and nothing is written. That is how a fenced runner is stopped.
	sub string
	// held, if set, is sub held open (a Run's, from its claim to Close):
	// the temp file is made and removed through it instead of a lookup of
	// sub per write; the rename still resolves sub by name.
	held *heldDir
}

func jobRecord(dir JobDir, name string) recordAt {
	return recordAt{dir: string(dir), name: name, job: true}
}

func pathRecord(path string) recordAt {
	return recordAt{dir: filepath.Dir(path), name: filepath.Base(path)}
}

func (r recordAt) path() string { return filepath.Join(r.dir, r.name) }

// publishMode is how the protocol's last step gives the temp file its name.
type publishMode int

const (
	replaceTarget publishMode = iota // status.json, index.json: the last write wins
	createOnly                       // job.json: written once; a taken name is ErrExists
)

// dirOps are the platform's primitives under the write protocol and the
// readers, each with one contract on every platform. dirHandle implements
// them on Unix (a directory descriptor and the *at system calls),
// Windows (the directory's path, MoveFileEx) and elsewhere (every call fails
// with errors.ErrUnsupported). The handle comes from openDir(path, job),
// which opens a directory for them; with job set, path's last element must
// be a directory, not a symbolic link (or a junction), else the error is a
// *notRegularError. Names passed to the methods are single file names in
// that directory, never paths.
type dirOps interface {
	// createTemp creates a new file named "." + name + decimal digits in the
	// directory, or in its subdirectory sub when sub is not "", exclusively
	// (never an existing file, never through a link at the file's name), with
	// perm less the umask, open for writing, and returns it and its name
	// relative to the directory ("sub/.name123"), which the other methods
	// accept as tmp: sub is looked up by name in each call.
	createTemp(sub, name string, perm fs.FileMode) (tempFile, string, error)
	// replace renames tmp to name, replacing name atomically if it exists (a
	// link at name is replaced, not followed). writeThrough asks that the
	// rename reach the disk before it returns where the platform can do that
	// in the call itself (Windows); elsewhere sync does it.
	replace(tmp, name string, writeThrough bool) error
	// publishNew gives tmp the name only if name is free; a taken name fails
	// with an error matching fs.ErrExist and changes nothing. linked reports
	// that tmp still exists as a second name of the file (link(2)) and must
	// be removed by the caller.
	publishNew(tmp, name string, writeThrough bool) (linked bool, err error)
	// remove removes name (a temp file, read-only or not).
	remove(name string) error
	// sync makes the directory's entries durable. It is nil where the
	// filesystem or the platform cannot sync a directory (EINVAL or ENOTSUP
	// on Unix; Windows journals them).
	sync() error
	// lstat describes name without following a link.
	lstat(name string) (fs.FileInfo, error)
	// names lists the names in the directory.
	names() ([]string, error)
	// openRecord opens name for reading without following a link and
	// without ever blocking (a FIFO or a device is opened non-blocking and
	// refused, not read). A name that is there but is not a regular file is
	// a *notRegularError.
	openRecord(name string) (recordFile, error)
	// openLock opens name for reading and writing, creating it (0644 less
	// the umask) if missing, without following a link; anything but a
	// regular file is a *notRegularError.
	openLock(name string) (*os.File, error)
	// close releases the handle.
	close() error
}

var _ dirOps = dirHandle{}

// tempFile is what the protocol needs of a new temp file.
type tempFile interface {
	io.Writer
	Sync() error
	Close() error
}

// notRegularError: a name is there but is not what the package reads or
// writes (a regular file, or a job directory that is a real directory).
type notRegularError struct{ mode fs.FileMode }

func (e *notRegularError) Error() string { return "is " + describeType(e.mode) }

// describeType names a file type for an error.
func describeType(m fs.FileMode) string {
	switch t := m.Type(); {
	case t&fs.ModeSymlink != 0:
		return "a symbolic link, which jobstore never follows"
	case t&fs.ModeNamedPipe != 0:
		return "a FIFO (named pipe), not a regular file"
	case t&fs.ModeSocket != 0:
		return "a socket, not a regular file"
	case t&fs.ModeDevice != 0:
		return "a device, not a regular file"
	case t&fs.ModeIrregular != 0:
		return "a special file (a junction or other reparse point), which jobstore never follows"
	case t&fs.ModeDir != 0:
		return "a directory, not a record file"
	case t == 0:
		return "a regular file, not a directory"
	}
	return "not a regular file"
}

// openDirAt opens at's directory for the protocol or a reader; errors are
// *Error (ErrNotRegular for a job directory that is a link); a missing
// directory matches fs.ErrNotExist, for the caller to judge.
func openDirAt(op string, at recordAt) (dirHandle, error) {
	d, err := openDir(at.dir, at.job)
	if err == nil {
		return d, nil
	}
	var nr *notRegularError
	switch {
	case errors.As(err, &nr):
		return d, irregular(op, at.dir, nr)
	case errors.Is(err, errors.ErrUnsupported):
		return d, errUnsupported(op, at.dir, err)
	}
	return d, stepError(op, at.dir, err, "cannot open the directory", "check that the directory exists and that this user may search it")
}

// writeRecord is the write protocol, the only one in the package: every
// writer on every platform goes through it, and each step's failure is
// reported here, by the step that failed.
//
//  1. open the directory (a job directory never through a link)
//  2. create the temp file in it (or in its subdirectory at.sub):
//     "." + name + digits, exclusive
//  3. write the data
//  4. fsync the temp file (unless NoSync); a failed fsync is never retried
//  5. close it
//  6. publish: rename over the target, or take the name only if it is free
//  7. fsync the directory (unless NoSync)
//
// A failure before step 6 removes the temp file and leaves the target as it
// was. The temp file is made and named relative to the directory opened in
// step 1, so the whole sequence acts on one directory even if its path is
// renamed or replaced by a link meanwhile. A subdirectory (at.sub) is the
// exception by design: it is named afresh in step 6 (and in step 2 unless
// at.held holds it open), so once it has been renamed away, the write fails
// at the latest at its rename (the fence, see fence.go).
func writeRecord(at recordAt, data []byte, o writeOptions, mode publishMode) error {
	if o.replaceTimeout < 0 {
		return errInvalid("write", at.path(), "replace timeout", o.replaceTimeout.String(), "0 or more",
			"must be 0 or more, got "+o.replaceTimeout.String(), "pass WithReplaceTimeout a duration of 0 or more")
	}
	d, err := openDirAt("open directory", at)
	if err != nil {
		return err
	}
	defer d.close()
	if mode == replaceTarget && runtime.GOOS == "windows" {
		// Windows never replaces a read-only file: a record that is rewritten
		// keeps the owner's write bit there, or the next write would fail.
		o.perm |= 0o200
	}
	create, remove := d.createTemp, d.remove
	if at.held != nil {
		create, remove = at.held.createTemp, at.held.remove
	}
	f, tmp, err := create(at.sub, at.name, o.perm)
	var nr *notRegularError
	if errors.As(err, &nr) { // the directory was swapped for a link meanwhile
		return irregular("create temp file", at.dir, nr)
	}
	if err != nil {
		return stepError("create temp file", at.path(), err, "cannot create the temp file in the record's directory", "")
	}
	fail := func(op string, err error, msg string) error {
		_ = remove(tmp) // the error that matters is the step's
		return stepError(op, filepath.Join(at.dir, tmp), err, msg, "")
	}
	if err := writeAll(f, data); err != nil {
		_ = f.Close()
		return fail("write", err, "cannot write the temp file")
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
	if err := publish(d, remove, at, tmp, mode, !o.noSync, o.replaceTimeout); err != nil {
		return err
	}
	if o.noSync {
		return nil
	}
	if err := d.sync(); err != nil {
		return stepError("fsync directory", at.dir, err,
			at.name+" is in place and visible, but the directory was not confirmed on disk, so the change may not survive a power cut",
			"check the disk and filesystem, then write the record again")
	}
	return nil
}

// publish is step 6 of writeRecord; remove removes the temp file after a
// failure.
func publish(d dirHandle, remove func(string) error, at recordAt, tmp string, mode publishMode, writeThrough bool, timeout time.Duration) error {
	if mode == replaceTarget {
		if err := replaceWithin(d, tmp, at.name, writeThrough, timeout); err != nil {
			_ = remove(tmp)
			msg, remedy := replaceFailure(d, at.name, err)
			return stepError("rename", at.path(), err, msg, remedy)
		}
		return nil
	}
	linked, err := d.publishNew(tmp, at.name, writeThrough)
	if err != nil {
		_ = remove(tmp)
		if errors.Is(err, fs.ErrExist) {
			return errExists("publish", at.path(), err)
		}
		return stepError("publish", at.path(), err, "cannot give the temp file the record's name", "")
	}
	if linked {
		if err := remove(tmp); err != nil {
			return stepError("remove temp file", filepath.Join(at.dir, tmp), err, "the record is in place, but its temp name could not be removed",
				"remove the file by hand; it is a second name of the record")
		}
	}
	return nil
}

// replaceWithin is dirOps.replace, waiting at most timeout for other
// processes where the platform's replace waits for them (Windows).
func replaceWithin(d dirHandle, tmp, name string, writeThrough bool, timeout time.Duration) error {
	if w, ok := any(d).(interface {
		replaceWithin(tmp, name string, writeThrough bool, timeout time.Duration) error
	}); ok {
		return w.replaceWithin(tmp, name, writeThrough, timeout)
	}
	return d.replace(tmp, name, writeThrough)
}

// writeAll writes all of data (a short write without an error is
// io.ErrShortWrite).
func writeAll(f tempFile, data []byte) error {
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

// mkdirDurable creates dir (and missing parents) and syncs each parent, so
// the new directory entries survive a power cut. An existing directory is
// not an error; its parent is synced all the same, since an earlier creator
// may have crashed before doing so. A link named dir is ErrNotRegular.
func mkdirDurable(dir string) error {
	const op = "create directory"
	err := os.Mkdir(dir, 0o755)
	if errors.Is(err, fs.ErrNotExist) {
		if perr := mkdirDurable(filepath.Dir(dir)); perr != nil {
			return perr
		}
		err = os.Mkdir(dir, 0o755)
	}
	if err != nil && !errors.Is(err, fs.ErrExist) {
		return stepError(op, dir, err, "cannot create the job directory", "check that the root exists and is writable")
	}
	if err != nil {
		fi, serr := os.Lstat(dir)
		switch {
		case serr == nil && fi.Mode().Type() != fs.ModeDir && fi.Mode().Type() != 0:
			return irregular(op, dir, &notRegularError{fi.Mode()})
		case serr != nil || !fi.IsDir():
			return stepError(op, dir, syscall.ENOTDIR, "exists and is not a directory", "remove or rename that file, or choose another job ID")
		}
	}
	parent := pathRecord(dir)
	d, err := openDirAt(op, recordAt{dir: parent.dir})
	if err != nil {
		return err
	}
	defer d.close()
	if err := d.sync(); err != nil {
		return stepError("fsync directory", parent.dir, err,
			"the directory "+parent.name+" exists, but its parent was not confirmed on disk, so it may not survive a power cut",
			"check the disk and filesystem, then write again")
	}
	return nil
}
