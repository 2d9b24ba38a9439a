package fsys

import (
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

// Windows has no renameio (every file of it is !windows) and no atomic
// rename in package os (os.Rename is MoveFileEx without WRITE_THROUGH, and Go
// documents it as not atomic there). The primitives here call MoveFileEx
// directly.
//
// Confinement on Windows: a confined directory is opened as a handle with
// FILE_FLAG_OPEN_REPARSE_POINT (a link or a junction is opened as itself and
// refused) and without FILE_SHARE_DELETE, so that while the Dir is open
// nobody can rename or delete the directory: the paths the other calls use
// keep naming it. Files are opened with FILE_FLAG_OPEN_REPARSE_POINT, so a
// link at their name is opened as itself (and refused), never followed.

// Dir is an open directory: its path and, for a confined one, a handle
// that pins it. sys is nil except in the package's own tests, which answer
// some system calls with errors that no test machine produces on demand.
type Dir struct {
	path string
	h    windows.Handle // 0: not confined
	sys  *sysCalls
}

// sysCalls replace system calls of the primitives for the package's tests;
// a nil field is the real call.
type sysCalls struct {
	moveFileEx  func(from, to *uint16, flags uint32) error
	renamePOSIX func(from, to string) error
	openFile    func(path string, access, share, disposition uint32) (*os.File, error)
}

func (d *Dir) moveFileEx(from, to *uint16, flags uint32) error {
	if d.sys != nil && d.sys.moveFileEx != nil {
		return d.sys.moveFileEx(from, to, flags)
	}
	return windows.MoveFileEx(from, to, flags)
}

func (d *Dir) renamePOSIX(from, to string) error {
	if d.sys != nil && d.sys.renamePOSIX != nil {
		return d.sys.renamePOSIX(from, to)
	}
	return renamePOSIX(from, to)
}

func (d *Dir) openFile(path string, access, share, disposition uint32) (*os.File, error) {
	if d.sys != nil && d.sys.openFile != nil {
		return d.sys.openFile(path, access, share, disposition)
	}
	return openNoFollow(path, access, share, disposition)
}

// OpenLookup is Open with nofollow: a Dir for reading and looking names
// up, which Windows opens no differently.
func OpenLookup(path string) (*Dir, error) { return Open(path, true) }

// Open opens the directory at path. With nofollow, path's last element must
// be a directory itself, not a link or a junction (a *NotRegularError), and
// the directory is pinned (no rename, no delete) until Close.
func Open(path string, nofollow bool) (*Dir, error) {
	if !nofollow {
		fi, err := os.Stat(path)
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			return nil, &fs.PathError{Op: "open", Path: path, Err: windows.ERROR_DIRECTORY}
		}
		return &Dir{path: path}, nil
	}
	h, err := openDirHandle(path)
	if err != nil {
		return nil, err
	}
	return &Dir{path: path, h: h}, nil
}

// openDirHandle opens path as a directory without following a reparse
// point and without FILE_SHARE_DELETE, and checks that it is a plain
// directory.
func openDirHandle(path string) (windows.Handle, error) {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return 0, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	h, err := windows.CreateFile(p, windows.FILE_READ_ATTRIBUTES|windows.SYNCHRONIZE,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE, nil, windows.OPEN_EXISTING,
		windows.FILE_FLAG_OPEN_REPARSE_POINT|windows.FILE_FLAG_BACKUP_SEMANTICS, 0)
	if err != nil {
		return 0, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	var info windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &info); err != nil {
		windows.CloseHandle(h)
		return 0, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	if info.FileAttributes&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0 || info.FileAttributes&windows.FILE_ATTRIBUTE_DIRECTORY == 0 {
		windows.CloseHandle(h)
		if fi, err := os.Lstat(path); err == nil {
			return 0, &NotRegularError{fi.Mode()}
		}
		return 0, &NotRegularError{fs.ModeIrregular}
	}
	return h, nil
}

// OpenDir opens the subdirectory name of d, never through a link or a
// junction, pinned like a confined Open.
func (d *Dir) OpenDir(name string) (*Dir, error) { return Open(d.Join(name), true) }

// Path is the path d was opened by.
func (d *Dir) Path() string { return d.path }

// Join is the path of name in d.
func (d *Dir) Join(name string) string { return filepath.Join(d.path, name) }

// Close releases the handle, if any; nil-safe.
func (d *Dir) Close() error {
	if d == nil || d.h == 0 {
		return nil
	}
	h := d.h
	d.h = 0
	return windows.CloseHandle(h)
}

// KeepRoot does nothing on Windows: CreateTemp needs nothing opened.
func (d *Dir) KeepRoot() error { return nil }

// CreateTemp creates "." + name + random digits with CREATE_NEW (O_EXCL),
// which fails on any existing name, a link included.
func (d *Dir) CreateTemp(name string, perm fs.FileMode) (File, string, error) {
	for attempt := 0; ; attempt++ {
		tmp := "." + name + strconv.FormatInt(rand.Int64(), 10)
		f, err := os.OpenFile(d.Join(tmp), os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		if err == nil {
			return f, tmp, nil
		}
		if !errors.Is(err, fs.ErrExist) || attempt > 10000 {
			return nil, "", err
		}
	}
}

// NewTemp is CreateTemp: on Windows no temp file needs a root.
func (d *Dir) NewTemp(name string, perm fs.FileMode) (File, string, error) {
	return d.CreateTemp(name, perm)
}

// Replace is MoveFileEx(REPLACE_EXISTING), with WRITE_THROUGH if asked,
// falling back to a POSIX-semantics rename and retrying for timeout while
// other processes hold the target (moveFile).
func (d *Dir) Replace(tmp, name string, writeThrough bool, timeout time.Duration) error {
	return d.moveFile(d.Join(tmp), d.Join(name), replaceFlags(writeThrough), timeout)
}

// ReplaceFrom is Replace of the file tmp in the directory from.
func (d *Dir) ReplaceFrom(from *Dir, tmp, name string) error {
	return d.moveFile(from.Join(tmp), d.Join(name), replaceFlags(true), DefaultReplaceTimeout)
}

// DefaultReplaceTimeout is how long ReplaceFrom waits for readers.
const DefaultReplaceTimeout = 2 * time.Second

func replaceFlags(writeThrough bool) uint32 {
	flags := uint32(windows.MOVEFILE_REPLACE_EXISTING)
	if writeThrough {
		flags |= windows.MOVEFILE_WRITE_THROUGH
	}
	return flags
}

// PublishNew is MoveFileEx without REPLACE_EXISTING: it fails with
// ERROR_ALREADY_EXISTS (fs.ErrExist) if the name is taken.
func (d *Dir) PublishNew(tmp, name string, writeThrough bool) (bool, error) {
	flags := uint32(0)
	if writeThrough {
		flags |= windows.MOVEFILE_WRITE_THROUGH
	}
	return false, d.moveFile(d.Join(tmp), d.Join(name), flags, DefaultReplaceTimeout)
}

// RenameDirNoReplace is MoveFileEx without MOVEFILE_REPLACE_EXISTING: it
// fails if the target exists.
func (d *Dir) RenameDirNoReplace(from, to string) error { return d.MoveDirNoReplace(from, d, to) }

// MoveDirNoReplace renames the directory from in d to to in dst (on the same
// volume), unless to exists, as RenameDirNoReplace does.
func (d *Dir) MoveDirNoReplace(from string, dst *Dir, to string) error {
	f, err := windows.UTF16PtrFromString(d.Join(from))
	if err != nil {
		return err
	}
	t, err := windows.UTF16PtrFromString(dst.Join(to))
	if err != nil {
		return err
	}
	return pathErr("rename", d.Join(from), windows.MoveFileEx(f, t, 0))
}

// Unlink removes a file, read-only or not (job.json's temp is created
// read-only, and DeleteFile refuses read-only files).
func (d *Dir) Unlink(name string) error {
	p := d.Join(name)
	err := os.Remove(p)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		_ = os.Chmod(p, 0o600)
		err = os.Remove(p)
	}
	return err
}

// RemoveDir removes the empty directory name.
func (d *Dir) RemoveDir(name string) error {
	p, err := windows.UTF16PtrFromString(d.Join(name))
	if err != nil {
		return err
	}
	return pathErr("remove", d.Join(name), windows.RemoveDirectory(p))
}

// Mkdir creates the directory name; an existing name fails with an error
// matching fs.ErrExist.
func (d *Dir) Mkdir(name string, perm fs.FileMode) error { return os.Mkdir(d.Join(name), perm) }

// Sync: no directory fsync; Windows cannot (FlushFileBuffers fails on a
// directory handle). With WRITE_THROUGH, MoveFileEx "does not return until
// the file has actually been moved on the disk", a guarantee Microsoft
// spells out only for moves done by copying; for this same-directory rename,
// durability rests on the NTFS journal.
func (d *Dir) Sync() error { return nil }

// Lstat describes name without following a link.
func (d *Dir) Lstat(name string) (fs.FileInfo, error) { return os.Lstat(d.Join(name)) }

// ID identifies a file for as long as it exists: volume serial number and
// file index.
type ID struct {
	volume    uint32
	high, low uint32
}

// ID is d's own identity.
func (d *Dir) ID() (ID, error) { return fileID(d.path) }

// EntryID is the identity of the entry name in d, without following a link.
func (d *Dir) EntryID(name string) (ID, error) { return fileID(d.Join(name)) }

func fileID(path string) (ID, error) {
	f, err := openNoFollow(path, windows.FILE_READ_ATTRIBUTES, recordShare, windows.OPEN_EXISTING)
	if err != nil {
		return ID{}, err
	}
	defer f.Close()
	id, err := FileID(f)
	if err != nil {
		return ID{}, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	return id, nil
}

// FileID is the identity of the open file f (one that CreateTemp returned).
func FileID(f File) (ID, error) {
	of, ok := f.(*os.File)
	if !ok {
		return ID{}, errors.ErrUnsupported
	}
	var info windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(windows.Handle(of.Fd()), &info); err != nil {
		return ID{}, err
	}
	return ID{volume: info.VolumeSerialNumber, high: info.FileIndexHigh, low: info.FileIndexLow}, nil
}

// Names lists the names in the directory.
func (d *Dir) Names() ([]string, error) {
	des, err := os.ReadDir(d.path)
	names := make([]string, len(des))
	for i, de := range des {
		names[i] = de.Name()
	}
	return names, err
}

// recordShare is how a reader shares the file it holds open: read, write
// and delete. Unlike os.Open (read and write only), it lets a writer replace
// the record while the reader has it open: a POSIX-semantics rename
// (moveFile) then succeeds at once, and the reader goes on reading the old
// file, complete.
const recordShare = windows.FILE_SHARE_READ | windows.FILE_SHARE_WRITE | windows.FILE_SHARE_DELETE

// OpenRecord opens name with FILE_FLAG_OPEN_REPARSE_POINT: a link is opened
// as itself (and refused by ReadAll after Stat), never followed. Windows has
// no FIFOs or devices in a directory, so the open never blocks.
func (d *Dir) OpenRecord(name string) (ReadFile, error) {
	f, err := d.openFile(d.Join(name), windows.GENERIC_READ, recordShare, windows.OPEN_EXISTING)
	if err != nil {
		return nil, err // not a nil *os.File in a non-nil interface
	}
	return f, nil
}

// OpenRecordHidden is OpenRecord for a record that a replace may hide for
// an instant (a reader that opens the target while MoveFileEx replaces it
// may get ERROR_FILE_NOT_FOUND on NTFS, as Microsoft's STL found in
// std::filesystem): if name is missing while witness exists (status.json beside
// its job.json), it is opened again, hiddenRetries times hiddenDelay apart,
// before the caller is told it is missing. That is also the cost of reading
// a job that has no status.json yet, on Windows only.
func (d *Dir) OpenRecordHidden(name, witness string) (ReadFile, error) {
	f, err := d.OpenRecord(name)
	if errors.Is(err, windows.ERROR_FILE_NOT_FOUND) {
		if _, serr := d.Lstat(witness); serr == nil {
			for i := 0; i < hiddenRetries && errors.Is(err, windows.ERROR_FILE_NOT_FOUND); i++ {
				time.Sleep(hiddenDelay)
				f, err = d.OpenRecord(name)
			}
		}
	}
	return f, err
}

const (
	hiddenRetries = 3
	hiddenDelay   = time.Millisecond
)

// OpenLock opens or creates name without following a link at its name;
// anything but a regular file is refused.
func (d *Dir) OpenLock(name string) (*os.File, error) {
	return d.openRegular(name, windows.GENERIC_READ|windows.GENERIC_WRITE, windows.OPEN_ALWAYS)
}

// OpenWriter opens or creates name for writing in place, never through a
// link, a regular file only; not truncated.
func (d *Dir) OpenWriter(name string, _ fs.FileMode) (*os.File, error) {
	return d.openRegular(name, windows.GENERIC_WRITE, windows.OPEN_ALWAYS)
}

// OpenReadWrite opens or creates name for reading and writing in place,
// never through a link, a regular file only; not truncated.
func (d *Dir) OpenReadWrite(name string, _ fs.FileMode) (*os.File, error) {
	return d.openRegular(name, windows.GENERIC_READ|windows.GENERIC_WRITE, windows.OPEN_ALWAYS)
}

// CreateExcl creates name, which must not exist (CREATE_NEW).
func (d *Dir) CreateExcl(name string, perm fs.FileMode) (File, error) {
	f, err := os.OpenFile(d.Join(name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return nil, err
	}
	return f, nil
}

func (d *Dir) openRegular(name string, access, disposition uint32) (*os.File, error) {
	f, err := openNoFollow(d.Join(name), access, windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE, disposition)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, &fs.PathError{Op: "stat", Path: f.Name(), Err: err}
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, &NotRegularError{fi.Mode()}
	}
	return f, nil
}

// openNoFollow is CreateFile with FILE_FLAG_OPEN_REPARSE_POINT, and
// FILE_FLAG_BACKUP_SEMANTICS so that a directory opens (and is then refused
// by its Stat) instead of failing with access denied, which readers retry.
func openNoFollow(path string, access, share, disposition uint32) (*os.File, error) {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	h, err := windows.CreateFile(p, access, share, nil, disposition,
		windows.FILE_ATTRIBUTE_NORMAL|windows.FILE_FLAG_OPEN_REPARSE_POINT|windows.FILE_FLAG_BACKUP_SEMANTICS, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(h), path), nil
}

// IsTransientRead reports an error that passes: while MoveFileEx replaces a
// file, opening it fails with a sharing violation or access denied for a
// moment.
func IsTransientRead(err error) bool { return isSharingError(err) }

// IsStaleHandle: Windows has no ESTALE.
func IsStaleHandle(error) bool { return false }

// IsDirNotEmpty reports a rename refused because the target is a directory
// that is not empty.
func IsDirNotEmpty(err error) bool {
	return errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, windows.ERROR_DIR_NOT_EMPTY)
}

// IsNotDir reports a path that runs through something that is not a
// directory.
func IsNotDir(err error) bool {
	return errors.Is(err, syscall.ENOTDIR) || errors.Is(err, windows.ERROR_DIRECTORY)
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

// moveFile renames from to to with MoveFileEx(flags). While MoveFileEx
// fails with a sharing error (isSharingError) on a target that is not
// read-only, it tries, in this order:
//
//  1. for a replace that failed with ERROR_ACCESS_DENIED or
//     ERROR_SHARING_VIOLATION, the POSIX-semantics rename (renamePOSIX), which
//     succeeds on NTFS (Windows 10 1607+) when every handle open on the
//     target shares delete, as jobstore's readers do; if the system or
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
func (d *Dir) moveFile(from, to string, flags uint32, timeout time.Duration) error {
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
			switch perr := d.renamePOSIX(from, to); {
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

// renamePOSIX renames the file at from to the path to with
// SetFileInformationByHandle(FileRenameInfoEx, REPLACE_IF_EXISTS |
// POSIX_SEMANTICS): the target's name goes to the new file at once even
// while other handles (sharing delete) keep the old file open. from is
// opened with DELETE access only, without following a link. With no root
// directory handle, a bare name renames within from's own directory, so a
// target in the same directory is passed as its name and any other as its
// full path.
func renamePOSIX(from, to string) error {
	if filepath.Dir(from) == filepath.Dir(to) {
		to = filepath.Base(to)
	}
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
	name16, err := windows.UTF16FromString(to) // ends with a NUL
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

// ReplaceFailure says why MoveFileEx could not replace name.
func (d *Dir) ReplaceFailure(name string, err error) (msg, remedy string) {
	switch {
	case isReadOnly(d.Join(name)):
		return "cannot replace the record: it is read-only (FILE_ATTRIBUTE_READONLY), and Windows does not replace a read-only file",
			"the previous record is intact; clear the attribute (attrib -r), then write again"
	case isSharingError(err):
		return "cannot replace the record: another process kept it open without FILE_SHARE_DELETE for longer than the replace timeout (WithReplaceTimeout, " + DefaultReplaceTimeout.String() + " by default)",
			"the previous record is intact; make the reader close the file between reads (or open it with FILE_SHARE_DELETE), then write again; " +
				"if no process holds it, check that this user may delete the file"
	}
	return "cannot replace the record with the temp file", ""
}

// pathErr wraps a non-nil error in an *fs.PathError.
func pathErr(op, path string, err error) error {
	if err == nil {
		return nil
	}
	return &fs.PathError{Op: op, Path: path, Err: err}
}
