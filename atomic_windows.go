package jobstore

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/windows"
)

// Windows has no renameio (every file of it is !windows) and no atomic
// rename in package os (os.Rename is MoveFileEx without WRITE_THROUGH, and Go
// documents it as not atomic there). This is the project's own path: the
// same protocol, with MoveFileEx called directly.

// replaceBudget is how long a replace or a read keeps retrying while another
// process holds the file open without FILE_SHARE_DELETE. Go's own
// cmd/internal/robustio uses the same 2 s.
const replaceBudget = 2 * time.Second

// openTemp creates "." + base + random digits in dir, O_EXCL, like renameio
// does on Unix, so IsTempName recognises it on every platform.
func openTemp(path string, perm os.FileMode) (*os.File, error) {
	prefix := filepath.Join(filepath.Dir(path), "."+filepath.Base(path))
	for attempt := 0; ; attempt++ {
		f, err := os.OpenFile(prefix+strconv.FormatInt(rand.Int64(), 10), os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		if !errors.Is(err, os.ErrExist) || attempt > 10000 {
			return f, err
		}
	}
}

// writeTemp writes data to a new temp file beside path, fsyncs it unless
// noSync, and closes it. On failure the temp file is gone.
func writeTemp(path string, data []byte, o writeOptions) (string, error) {
	f, err := openTemp(path, o.perm)
	if err != nil {
		return "", stepError("create temp file", path, err, "cannot create the temp file in the record's directory", "")
	}
	tmp := f.Name()
	fail := func(op, msg string, err error) (string, error) {
		_ = f.Close()
		_ = removeTemp(tmp)
		return "", stepError(op, tmp, err, msg, "")
	}
	if _, err := f.Write(data); err != nil {
		return fail("write", "cannot write the temp file", err)
	}
	if !o.noSync {
		if err := f.Sync(); err != nil { // FlushFileBuffers; never retried
			return fail("fsync", "the disk did not confirm the temp file (not retried)", err)
		}
	}
	if err := f.Close(); err != nil {
		return fail("close", "cannot close the temp file", err)
	}
	return tmp, nil
}

// removeTemp removes a temp file, read-only or not (job.json's temp is
// created read-only, and DeleteFile refuses read-only files).
func removeTemp(name string) error {
	err := os.Remove(name)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		_ = os.Chmod(name, 0o600)
		err = os.Remove(name)
	}
	return err
}

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

func replaceFile(path string, data []byte, o writeOptions) error {
	// A perm without the owner's write bit makes a read-only file on Windows,
	// and Windows never replaces a read-only file: the next write would fail.
	// A record that is rewritten stays writable here.
	o.perm |= 0o200
	tmp, err := writeTemp(path, data, o)
	if err != nil {
		return err
	}
	flags := uint32(windows.MOVEFILE_REPLACE_EXISTING)
	if !o.noSync {
		flags |= windows.MOVEFILE_WRITE_THROUGH
	}
	if err := moveFile(tmp, path, flags); err != nil {
		_ = removeTemp(tmp)
		switch {
		case isReadOnly(path):
			return stepError("rename", path, err,
				"cannot replace the record: it is read-only (FILE_ATTRIBUTE_READONLY), and Windows does not replace a read-only file",
				"the previous record is intact; clear the attribute (attrib -r), then write again")
		case isSharingError(err):
			return stepError("rename", path, err,
				"cannot replace the record: another process kept it open without FILE_SHARE_DELETE for more than "+replaceBudget.String(),
				"the previous record is intact; make the reader close the file between reads (or open it with FILE_SHARE_DELETE), then write again; "+
					"if no process holds it, check that this user may delete the file")
		}
		return stepError("rename", path, err, "cannot replace the record with the temp file", "")
	}
	// No directory fsync: Windows cannot. With WRITE_THROUGH, MoveFileEx
	// "does not return until the file has actually been moved on the disk",
	// a guarantee Microsoft spells out only for moves done by copying; for
	// this same-directory rename, durability rests on the NTFS journal.
	return nil
}

func createExclusive(path string, data []byte, o writeOptions) error {
	tmp, err := writeTemp(path, data, o)
	if err != nil {
		return err
	}
	flags := uint32(0) // no REPLACE_EXISTING: fails if the name is taken
	if !o.noSync {
		flags |= windows.MOVEFILE_WRITE_THROUGH
	}
	if err := moveFile(tmp, path, flags); err != nil {
		_ = removeTemp(tmp)
		if errors.Is(err, windows.ERROR_ALREADY_EXISTS) || errors.Is(err, windows.ERROR_FILE_EXISTS) {
			return &Error{Op: "publish", Path: path, Msg: "already exists; a job record is written once",
				Err: &os.PathError{Op: "MoveFileEx", Path: path, Err: err}, Sentinel: ErrExists,
				Remedy: "read the existing record, or submit under a new job ID"}
		}
		return stepError("publish", path, err, "cannot give the temp file the record's name", "")
	}
	return nil
}

// mkdirDurable creates dir and missing parents. Windows cannot fsync a
// directory; NTFS journals the new entries.
func mkdirDurable(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return stepError("create directory", dir, err, "cannot create the job directory", "check that the root exists and is writable")
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return stepError("create directory", dir, syscall.ENOTDIR, "exists and is not a directory", "remove or rename that file, or choose another job ID")
	}
	return nil
}
