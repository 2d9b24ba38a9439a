package jobstore

import (
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"golang.org/x/sys/windows"
)

// Windows has no renameio (every file of it is !windows) and no atomic
// rename in package os (os.Rename is MoveFileEx without WRITE_THROUGH, and Go
// documents it as not atomic there). The primitives here call MoveFileEx
// directly; the protocol above them is writeRecord's, as on Unix.
//
// Confinement on Windows: a job directory that is a symbolic link or a
// junction is refused by an Lstat when it is opened, and records and
// job.lock are opened with FILE_FLAG_OPEN_REPARSE_POINT, so a link at their
// name is opened as itself (and refused), never followed. MoveFileEx takes
// paths, so unlike Unix the directory is named again on every step: a
// directory swapped for a link between the Lstat and a step is not detected.

// dirHandle is the directory's path: Windows needs no descriptor for the
// protocol (its directories are never fsynced).
type dirHandle struct{ path string }

// openDir checks that dir is a directory (for a job directory, one that is
// not a link or a junction), as opening it does on Unix.
func openDir(dir string, job bool) (dirHandle, error) {
	stat := os.Stat
	if job {
		stat = os.Lstat
	}
	fi, err := stat(dir)
	if err != nil {
		return dirHandle{}, err
	}
	if job && fi.Mode().Type() != fs.ModeDir { // a link, or a junction (ModeDir|ModeIrregular)
		return dirHandle{}, &notRegularError{fi.Mode()}
	}
	if !fi.IsDir() {
		return dirHandle{}, &fs.PathError{Op: "open", Path: dir, Err: windows.ERROR_DIRECTORY}
	}
	return dirHandle{path: dir}, nil
}

func (d dirHandle) close() error { return nil }

func (d dirHandle) join(name string) string { return filepath.Join(d.path, name) }

// createTemp: CREATE_NEW (O_EXCL) fails on any existing name, a link
// included.
func (d dirHandle) createTemp(sub, name string, perm fs.FileMode) (tempFile, string, error) {
	for attempt := 0; ; attempt++ {
		tmp := filepath.Join(sub, "."+name+strconv.FormatInt(rand.Int64(), 10))
		f, err := os.OpenFile(d.join(tmp), os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		if err == nil {
			return f, tmp, nil
		}
		if !errors.Is(err, fs.ErrExist) || attempt > 10000 {
			return nil, "", err
		}
	}
}

// replace is MoveFileEx(REPLACE_EXISTING), with WRITE_THROUGH unless NoSync,
// retried while a reader holds the target (moveFile).
func (d dirHandle) replace(tmp, name string, writeThrough bool) error {
	flags := uint32(windows.MOVEFILE_REPLACE_EXISTING)
	if writeThrough {
		flags |= windows.MOVEFILE_WRITE_THROUGH
	}
	return moveFile(d.join(tmp), d.join(name), flags)
}

// publishNew is MoveFileEx without REPLACE_EXISTING: it fails with
// ERROR_ALREADY_EXISTS (fs.ErrExist) if the name is taken.
func (d dirHandle) publishNew(tmp, name string, writeThrough bool) (bool, error) {
	flags := uint32(0)
	if writeThrough {
		flags |= windows.MOVEFILE_WRITE_THROUGH
	}
	return false, moveFile(d.join(tmp), d.join(name), flags)
}

// remove removes a file, read-only or not (job.json's temp is created
// read-only, and DeleteFile refuses read-only files).
func (d dirHandle) remove(name string) error {
	p := d.join(name)
	err := os.Remove(p)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		_ = os.Chmod(p, 0o600)
		err = os.Remove(p)
	}
	return err
}

// sync: no directory fsync; Windows cannot (FlushFileBuffers fails on a
// directory handle). With WRITE_THROUGH, MoveFileEx "does not return until
// the file has actually been moved on the disk", a guarantee Microsoft
// spells out only for moves done by copying; for this same-directory rename,
// durability rests on the NTFS journal.
func (d dirHandle) sync() error { return nil }

func (d dirHandle) lstat(name string) (fs.FileInfo, error) { return os.Lstat(d.join(name)) }

func (d dirHandle) names() ([]string, error) {
	des, err := os.ReadDir(d.path)
	names := make([]string, len(des))
	for i, de := range des {
		names[i] = de.Name()
	}
	return names, err
}

// replaceBudget is how long a replace or a read keeps retrying while another
// process holds the file open without FILE_SHARE_DELETE. Go's own
// cmd/internal/robustio uses the same 2 s.
const replaceBudget = 2 * time.Second

// isSharingError: another process has the file open in a way that forbids
// what we ask (a reader without FILE_SHARE_DELETE, an antivirus scan).
func isSharingError(err error) bool {
	return errors.Is(err, windows.ERROR_SHARING_VIOLATION) || errors.Is(err, windows.ERROR_ACCESS_DENIED) ||
		errors.Is(err, windows.ERROR_LOCK_VIOLATION)
}

// replaceRetryDelay caps the pause between two replace attempts. A reader
// holds the file open only while it reads it; the replace needs one instant
// when nobody does. Short, jittered pauses find that instant even against a
// poller that keeps the file open most of the time; robustio's ever-growing
// pauses (made for virus scanners that hold a file for seconds) let such a
// poller starve the writer for the whole budget in about 17 attempts.
const replaceRetryDelay = 4 * time.Millisecond

// moveFile calls MoveFileEx, retrying sharing errors for replaceBudget,
// pausing 1 ms at first, growing to replaceRetryDelay, with random jitter.
func moveFile(from, to string, flags uint32) error {
	fromp, err := windows.UTF16PtrFromString(from)
	if err != nil {
		return err
	}
	top, err := windows.UTF16PtrFromString(to)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(replaceBudget)
	delay := time.Millisecond
	for {
		err = windows.MoveFileEx(fromp, top, flags)
		if err == nil || !isSharingError(err) || isReadOnly(to) || time.Now().After(deadline) {
			return err // a read-only target stays read-only: waiting changes nothing
		}
		time.Sleep(delay + rand.N(delay))
		delay = min(2*delay, replaceRetryDelay)
	}
}

// isReadOnly reports whether path has FILE_ATTRIBUTE_READONLY, which makes
// MoveFileEx refuse to replace it (ERROR_ACCESS_DENIED), like DeleteFile.
func isReadOnly(path string) bool {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return false
	}
	attrs, err := windows.GetFileAttributes(p)
	return err == nil && attrs&windows.FILE_ATTRIBUTE_READONLY != 0
}

// replaceFailure says why MoveFileEx could not replace name.
func replaceFailure(d dirHandle, name string, err error) (msg, remedy string) {
	switch {
	case isReadOnly(d.join(name)):
		return "cannot replace the record: it is read-only (FILE_ATTRIBUTE_READONLY), and Windows does not replace a read-only file",
			"the previous record is intact; clear the attribute (attrib -r), then write again"
	case isSharingError(err):
		return "cannot replace the record: another process kept it open without FILE_SHARE_DELETE for more than " + replaceBudget.String(),
			"the previous record is intact; make the reader close the file between reads (or open it with FILE_SHARE_DELETE), then write again; " +
				"if no process holds it, check that this user may delete the file"
	}
	return "cannot replace the record with the temp file", ""
}
