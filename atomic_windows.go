package jobstore

import (
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"time"
	"unsafe"

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
// protocol (its directories are never fsynced). sys is nil except in the
// package's own tests, which answer some system calls with errors that no
// test machine produces on demand.
type dirHandle struct {
	path string
	sys  *sysCalls
}

// sysCalls replace system calls of the primitives for the package's tests;
// a nil field is the real call.
type sysCalls struct {
	moveFileEx  func(from, to *uint16, flags uint32) error
	renamePOSIX func(from, name string) error
	openFile    func(path string, access, share, disposition uint32) (*os.File, error)
}

func (d dirHandle) moveFileEx(from, to *uint16, flags uint32) error {
	if d.sys != nil && d.sys.moveFileEx != nil {
		return d.sys.moveFileEx(from, to, flags)
	}
	return windows.MoveFileEx(from, to, flags)
}

func (d dirHandle) renamePOSIX(from, name string) error {
	if d.sys != nil && d.sys.renamePOSIX != nil {
		return d.sys.renamePOSIX(from, name)
	}
	return renamePOSIX(from, name)
}

func (d dirHandle) openFile(path string, access, share, disposition uint32) (*os.File, error) {
	if d.sys != nil && d.sys.openFile != nil {
		return d.sys.openFile(path, access, share, disposition)
	}
	return openNoFollow(path, access, share, disposition)
}

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

// replace is replaceWithin with DefaultReplaceTimeout.
func (d dirHandle) replace(tmp, name string, writeThrough bool) error {
	return d.replaceWithin(tmp, name, writeThrough, DefaultReplaceTimeout)
}

// replaceWithin is MoveFileEx(REPLACE_EXISTING), with WRITE_THROUGH unless
// NoSync, falling back to a POSIX-semantics rename and retrying for timeout
// while other processes hold the target (moveFile).
func (d dirHandle) replaceWithin(tmp, name string, writeThrough bool, timeout time.Duration) error {
	flags := uint32(windows.MOVEFILE_REPLACE_EXISTING)
	if writeThrough {
		flags |= windows.MOVEFILE_WRITE_THROUGH
	}
	return d.moveFile(tmp, name, flags, timeout)
}

// publishNew is MoveFileEx without REPLACE_EXISTING: it fails with
// ERROR_ALREADY_EXISTS (fs.ErrExist) if the name is taken.
func (d dirHandle) publishNew(tmp, name string, writeThrough bool) (bool, error) {
	flags := uint32(0)
	if writeThrough {
		flags |= windows.MOVEFILE_WRITE_THROUGH
	}
	return false, d.moveFile(tmp, name, flags, DefaultReplaceTimeout)
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

// moveFile renames tmp to name in the directory with MoveFileEx(flags).
// While MoveFileEx fails with a sharing error (isSharingError) on a target
// that is not read-only, it tries, in this order:
//
//  1. for a replace that failed with ERROR_ACCESS_DENIED or
//     ERROR_SHARING_VIOLATION, the POSIX-semantics rename (renamePOSIX), which
//     succeeds on NTFS (Windows 10 1607+) when every handle open on the
//     target shares delete, as the package's readers do; if the system or
//     the volume does not support it (unsupportedRename: older Windows,
//     FAT/exFAT, ReFS on Server 2022, Wine), it is not asked again in this
//     call, and nowhere else is that remembered: support differs from one
//     volume to the next, and a process may write to several;
//  2. MoveFileEx again after a pause of 1 ms, growing to
//     replaceRetryDelay, with random jitter, until timeout has passed.
//
// MoveFileEx comes first, as in Rust's standard library, which tried the
// POSIX rename first and went back to MoveFileEx first when that failed on
// file systems without it. A read-only target is never retried, and the
// POSIX rename is not tried on it: Windows does not replace a read-only
// file, and waiting changes nothing. The error returned is MoveFileEx's
// last, or the POSIX rename's if it failed in any other way.
func (d dirHandle) moveFile(tmp, name string, flags uint32, timeout time.Duration) error {
	from, to := d.join(tmp), d.join(name)
	fromp, err := windows.UTF16PtrFromString(from)
	if err != nil {
		return err
	}
	top, err := windows.UTF16PtrFromString(to)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(timeout)
	delay := time.Millisecond
	posix := flags&windows.MOVEFILE_REPLACE_EXISTING != 0 // it replaces; a new name is published by MoveFileEx alone
	for {
		err = d.moveFileEx(fromp, top, flags)
		if err == nil || !isSharingError(err) || isReadOnly(to) {
			return err
		}
		if posix && (errors.Is(err, windows.ERROR_ACCESS_DENIED) || errors.Is(err, windows.ERROR_SHARING_VIOLATION)) {
			switch perr := d.renamePOSIX(from, name); {
			case perr == nil:
				return nil
			case unsupportedRename(perr):
				posix = false
			case !isSharingError(perr):
				return perr
			}
		}
		if !time.Now().Before(deadline) {
			return err
		}
		time.Sleep(delay + rand.N(delay))
		delay = min(2*delay, replaceRetryDelay)
	}
}

// unsupportedRename: the system or the volume has no POSIX-semantics rename.
func unsupportedRename(err error) bool {
	return errors.Is(err, windows.ERROR_INVALID_PARAMETER) || errors.Is(err, windows.ERROR_NOT_SUPPORTED) ||
		errors.Is(err, windows.ERROR_INVALID_FUNCTION)
}

// fileRenameInfo is FILE_RENAME_INFO; Flags is the union with the BOOLEAN
// ReplaceIfExists (FileRenameInfoEx reads it as flags).
type fileRenameInfo struct {
	Flags          uint32
	RootDirectory  windows.Handle
	FileNameLength uint32 // in bytes, without the terminating NUL
	FileName       [1]uint16
}

// renamePOSIX renames the file at from to name, in the same directory, with
// SetFileInformationByHandle(FileRenameInfoEx, REPLACE_IF_EXISTS |
// POSIX_SEMANTICS): the target's name goes to the new file at once even
// while other handles (sharing delete) keep the old file open. from is
// opened with DELETE access only, without following a link. name is a bare
// file name with no root directory, which the rename resolves in from's own
// directory.
func renamePOSIX(from, name string) error {
	fromp, err := windows.UTF16PtrFromString(from)
	if err != nil {
		return err
	}
	h, err := windows.CreateFile(fromp, windows.DELETE|windows.SYNCHRONIZE,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, nil, windows.OPEN_EXISTING,
		windows.FILE_FLAG_OPEN_REPARSE_POINT|windows.FILE_FLAG_BACKUP_SEMANTICS, 0)
	if err != nil {
		return err
	}
	defer windows.CloseHandle(h)
	name16, err := windows.UTF16FromString(name) // ends with a NUL
	if err != nil {
		return err
	}
	size := unsafe.Offsetof(fileRenameInfo{}.FileName) + uintptr(len(name16))*2
	buf := make([]uint64, (size+7)/8) // 8-aligned, as the struct's handle needs
	info := (*fileRenameInfo)(unsafe.Pointer(&buf[0]))
	info.Flags = windows.FILE_RENAME_REPLACE_IF_EXISTS | windows.FILE_RENAME_POSIX_SEMANTICS
	info.FileNameLength = uint32(len(name16)-1) * 2
	copy(unsafe.Slice(&info.FileName[0], len(name16)), name16)
	return windows.SetFileInformationByHandle(h, windows.FileRenameInfoEx, (*byte)(unsafe.Pointer(info)), uint32(size))
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
		return "cannot replace the record: another process kept it open without FILE_SHARE_DELETE for longer than the replace timeout (WithReplaceTimeout, " + DefaultReplaceTimeout.String() + " by default)",
			"the previous record is intact; make the reader close the file between reads (or open it with FILE_SHARE_DELETE), then write again; " +
				"if no process holds it, check that this user may delete the file"
	}
	return "cannot replace the record with the temp file", ""
}
