//go:build unix

package fsys

import (
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Confinement on Unix: a directory descriptor and the *at system calls with
// O_NOFOLLOW. A confined directory is opened once with
// O_DIRECTORY|O_NOFOLLOW (a link there is refused, wherever it points), then
// every file in it is renamed, opened and stat'ed relative to that
// descriptor, never following a link at the file's own name. That is
// stricter than os.Root (which follows links that stay inside the root), and
// readers pay nothing more than the open. The one step not done by an *at
// call on the descriptor is the temp file's creation, which renameio does
// (tempfile_unix.go): on Linux by the descriptor's /proc/self/fd link, which
// names the very directory held; elsewhere in an os.Root checked to be it.

// Dir is an open directory: its descriptor, and its path for errors and,
// where there is no /proc/self/fd, for the temp file's os.Root.
type Dir struct {
	fd       int
	path     string
	nofollow bool     // opened with O_NOFOLLOW: a link in its place is refused
	root     *os.Root // kept by KeepRoot; nil: CreateTemp opens one per call
}

// Open opens the directory at path. With nofollow, path's last element must
// be a directory itself (O_NOFOLLOW refuses a link whatever it points to):
// anything else there is a *NotRegularError. The path above it may hold
// links (the caller's choice).
func Open(path string, nofollow bool) (*Dir, error) { return open(path, nofollow, unix.O_RDONLY) }

// OpenLookup opens the directory at path as Open with nofollow does, for
// reading the files in it and looking names up (OpenRecord, Lstat, EntryID,
// ID, Names) and nothing else: not Sync, not a write. On Linux the
// descriptor is O_PATH, which the kernel opens for less than a readable
// one; the directory then needs search permission only, as a path through
// it would.
func OpenLookup(path string) (*Dir, error) { return open(path, true, lookupFlag) }

// open is Open and OpenLookup: the directory at path opened with mode
// (O_RDONLY, or lookupFlag).
func open(path string, nofollow bool, mode int) (*Dir, error) {
	flags := mode | unix.O_DIRECTORY | unix.O_CLOEXEC
	if nofollow {
		flags |= unix.O_NOFOLLOW
	}
	fd, err := openat(unix.AT_FDCWD, path, flags, 0)
	if err == nil {
		return &Dir{fd: fd, path: path, nofollow: nofollow}, nil
	}
	// ELOOP (Linux, macOS), EMLINK (FreeBSD), EFTYPE (NetBSD) or ENOTDIR:
	// say what is there instead of a directory.
	if err != unix.ENOENT {
		if nr := notRegularAt(unix.AT_FDCWD, path, fs.ModeDir); nr != nil {
			return nil, nr
		}
	}
	return nil, &fs.PathError{Op: "open", Path: path, Err: err}
}

// OpenDir opens the subdirectory name of d, never through a link: anything
// but a directory there is a *NotRegularError.
func (d *Dir) OpenDir(name string) (*Dir, error) {
	path := d.Join(name)
	fd, err := openat(d.fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err == nil {
		return &Dir{fd: fd, path: path, nofollow: true}, nil
	}
	if err != unix.ENOENT {
		if nr := notRegularAt(d.fd, name, fs.ModeDir); nr != nil {
			return nil, nr
		}
	}
	return nil, &fs.PathError{Op: "open", Path: path, Err: err}
}

// Path is the path d was opened by (or its parent's path and its name).
func (d *Dir) Path() string { return d.path }

// Join is the path of name in d, for errors.
func (d *Dir) Join(name string) string { return filepath.Join(d.path, name) }

// Close releases the descriptor (and the root KeepRoot kept); nil-safe.
func (d *Dir) Close() error {
	if d == nil {
		return nil
	}
	var rerr error
	if d.root != nil {
		rerr = d.root.Close()
	}
	return errors.Join(unix.Close(d.fd), rerr)
}

// notRegularAt describes name when it is not of type want (0 for a regular
// file), without following a link; nil if it is, or cannot be seen.
func notRegularAt(dirfd int, name string, want fs.FileMode) *NotRegularError {
	var st unix.Stat_t
	if err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return nil
	}
	if m := FileMode(uint32(st.Mode)); m.Type() != want {
		return &NotRegularError{m}
	}
	return nil
}

// openat is unix.Openat, retried on EINTR.
func openat(dirfd int, name string, flags int, perm uint32) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, flags, perm)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// Replace renames tmp to name, replacing name atomically if it exists (a
// link at name is replaced, not followed). On Unix a rename never waits for
// readers, so writeThrough and timeout have no effect (Sync makes it
// durable).
func (d *Dir) Replace(tmp, name string, _ bool, _ time.Duration) error {
	return pathErr("rename", d.Join(name), unix.Renameat(d.fd, tmp, d.fd, name))
}

// ReplaceFrom renames tmp in the directory from to name in d, replacing
// name: the publish step of a write whose temp file lives in another
// directory.
func (d *Dir) ReplaceFrom(from *Dir, tmp, name string) error {
	return pathErr("rename", d.Join(name), unix.Renameat(from.fd, tmp, d.fd, name))
}

// PublishNew gives tmp the name name only if name is free; a taken name
// fails with an error matching fs.ErrExist and changes nothing. linked
// reports that tmp still exists as a second name of the file (link(2), where
// the filesystem has no no-replace rename) and must be removed by the
// caller.
func (d *Dir) PublishNew(tmp, name string, _ bool) (linked bool, err error) {
	moved, err := renameNoReplace(d.fd, tmp, d.fd, name)
	if err != nil || moved {
		return false, pathErr("rename", d.Join(name), err)
	}
	// No no-replace rename here: link(2) fails with EEXIST on a taken name
	// just the same, and leaves the temp name for the caller to remove.
	return true, pathErr("link", d.Join(name), linkAt(d, tmp, name))
}

// RenameDirNoReplace renames the directory from to to, both in d, unless to
// exists: with a no-replace rename where the filesystem has one, else
// rename(2), which replaces only an empty directory.
func (d *Dir) RenameDirNoReplace(from, to string) error { return d.MoveDirNoReplace(from, d, to) }

// MoveDirNoReplace renames the directory from in d to to in dst (on the same
// filesystem), unless to exists, as RenameDirNoReplace does.
func (d *Dir) MoveDirNoReplace(from string, dst *Dir, to string) error {
	moved, err := renameNoReplace(d.fd, from, dst.fd, to)
	if err == nil && !moved {
		err = unix.Renameat(d.fd, from, dst.fd, to)
	}
	return pathErr("rename", d.Join(from), err)
}

// Unlink removes the file name (not a directory).
func (d *Dir) Unlink(name string) error {
	return pathErr("remove", d.Join(name), unix.Unlinkat(d.fd, name, 0))
}

// RemoveDir removes the empty directory name.
func (d *Dir) RemoveDir(name string) error {
	return pathErr("remove", d.Join(name), unix.Unlinkat(d.fd, name, unix.AT_REMOVEDIR))
}

// Mkdir creates the directory name with perm (less the umask); an existing
// name, a link included, fails with an error matching fs.ErrExist.
func (d *Dir) Mkdir(name string, perm fs.FileMode) error {
	return pathErr("mkdir", d.Join(name), unix.Mkdirat(d.fd, name, uint32(perm.Perm())))
}

// Sync makes the directory's entries durable. It is nil where the
// filesystem cannot sync a directory (EINVAL, ENOTSUP).
func (d *Dir) Sync() error {
	err := unix.Fsync(d.fd)
	for err == unix.EINTR { // interrupted before it ran (as os.File.Sync retries); not a failed fsync
		err = unix.Fsync(d.fd)
	}
	if err == unix.EINVAL || err == unix.ENOTSUP || err == unix.EOPNOTSUPP {
		return nil // some filesystems cannot fsync a directory; nothing more to do there
	}
	return err
}

// Lstat describes name without following a link.
func (d *Dir) Lstat(name string) (fs.FileInfo, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return nil, &fs.PathError{Op: "lstat", Path: d.Join(name), Err: err}
	}
	return statInfo(name, &st), nil
}

// ID identifies a file for as long as it exists: the same ID is the same
// file (device and inode on Unix).
type ID struct{ dev, ino uint64 }

// ID is d's own identity.
func (d *Dir) ID() (ID, error) {
	var st unix.Stat_t
	if err := unix.Fstat(d.fd, &st); err != nil {
		return ID{}, &fs.PathError{Op: "fstat", Path: d.path, Err: err}
	}
	return ID{uint64(st.Dev), uint64(st.Ino)}, nil
}

// EntryID is the identity of the entry name in d, without following a link.
func (d *Dir) EntryID(name string) (ID, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return ID{}, &fs.PathError{Op: "lstat", Path: d.Join(name), Err: err}
	}
	return ID{uint64(st.Dev), uint64(st.Ino)}, nil
}

// FileID is the identity of the open file f (one that CreateTemp returned).
func FileID(f File) (ID, error) {
	var fd int
	switch f := f.(type) {
	case rawFile:
		fd = int(f)
	case interface{ Fd() uintptr }:
		fd = int(f.Fd())
	default:
		return ID{}, errors.ErrUnsupported
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return ID{}, err
	}
	return ID{uint64(st.Dev), uint64(st.Ino)}, nil
}

// Names lists the names in the directory.
func (d *Dir) Names() ([]string, error) {
	fd, err := openat(d.fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: d.path, Err: err}
	}
	f := os.NewFile(uintptr(fd), d.path)
	defer f.Close()
	return f.Readdirnames(-1)
}

// OpenRecord opens name for reading without following a link and without
// ever blocking: openat(O_NONBLOCK|O_NOFOLLOW). O_NONBLOCK keeps a FIFO or
// a device from blocking the open (ReadAll refuses either after fstat; a
// regular file ignores the flag); O_NOFOLLOW refuses a link (ELOOP, or
// EMLINK/EFTYPE on some BSDs), and opening a socket fails with ENXIO: a name
// that is there but is not a regular file is a *NotRegularError. os.Open
// would add four fcntl calls and a failed epoll registration per regular
// file on Linux (and an *os.File with its cleanup); a listing reads two
// records per job.
func (d *Dir) OpenRecord(name string) (ReadFile, error) {
	fd, err := openat(d.fd, name, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK|unix.O_NOFOLLOW, 0)
	if err == nil {
		return rawFile(fd), nil
	}
	if err != unix.ENOENT {
		if nr := notRegularAt(d.fd, name, 0); nr != nil {
			return nil, nr
		}
	}
	return nil, &fs.PathError{Op: "open", Path: d.Join(name), Err: err}
}

// OpenRecordHidden is OpenRecord: a rename replaces a name atomically on
// Unix, so a reader never finds it missing meanwhile (witness is for
// Windows, see there).
func (d *Dir) OpenRecordHidden(name, _ string) (ReadFile, error) { return d.OpenRecord(name) }

// OpenLock opens name for reading and writing, creating it (0666 less the
// umask: every user that starts or cancels the job opens it so) if missing: O_NOFOLLOW, so a planted link fails (ELOOP) instead of
// creating its target; O_NONBLOCK, so a FIFO or a device there cannot block
// the open; then fstat refuses anything but a regular file
// (*NotRegularError).
func (d *Dir) OpenLock(name string) (*os.File, error) {
	fd, err := d.openRegular(name, unix.O_RDWR|unix.O_CREAT, 0o666)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), d.Join(name)), nil
}

// OpenWriter opens name for writing in place, creating it (perm less the
// umask) if missing, with the same refusals as OpenLock: never through a
// link, never blocking, a regular file only. The file is not truncated.
func (d *Dir) OpenWriter(name string, perm fs.FileMode) (*os.File, error) {
	fd, err := d.openRegular(name, unix.O_WRONLY|unix.O_CREAT, uint32(perm.Perm()))
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), d.Join(name)), nil
}

// OpenReadWrite is OpenWriter for reading and writing: name opened or
// created in place, never through a link, never blocking, a regular file
// only, not truncated.
func (d *Dir) OpenReadWrite(name string, perm fs.FileMode) (*os.File, error) {
	fd, err := d.openRegular(name, unix.O_RDWR|unix.O_CREAT, uint32(perm.Perm()))
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), d.Join(name)), nil
}

// NewTemp creates a temp file for name in d as CreateTemp names it ("." +
// name + random decimal digits, O_CREAT|O_EXCL|O_NOFOLLOW, a new name on a
// collision, perm less the umask), but relative to d's descriptor, without
// renameio's os.Root: for a directory looked up afresh for each write,
// which an os.Root would have to open and check by path each time.
func (d *Dir) NewTemp(name string, perm fs.FileMode) (File, string, error) {
	for attempt := 0; ; attempt++ {
		tmp := "." + name + strconv.FormatUint(rand.Uint64()>>1, 10)
		fd, err := openat(d.fd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(perm.Perm()))
		if err == nil {
			return rawFile(fd), tmp, nil
		}
		if err != unix.EEXIST || attempt >= 100 {
			return nil, "", &fs.PathError{Op: "create", Path: d.Join(tmp), Err: err}
		}
	}
}

// CreateExcl creates name, which must not exist (O_EXCL: a link there is an
// existing name too), for writing.
func (d *Dir) CreateExcl(name string, perm fs.FileMode) (File, error) {
	fd, err := openat(d.fd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(perm.Perm()))
	if err != nil {
		return nil, &fs.PathError{Op: "create", Path: d.Join(name), Err: err}
	}
	return rawFile(fd), nil
}

// openRegular opens name with flags plus O_NOFOLLOW|O_NONBLOCK|O_CLOEXEC,
// refuses anything but a regular file, and clears O_NONBLOCK (a regular
// file ignores it; os.NewFile then gives a plain blocking *os.File).
func (d *Dir) openRegular(name string, flags int, perm uint32) (int, error) {
	fd, err := openat(d.fd, name, flags|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, perm)
	if err != nil {
		if nr := notRegularAt(d.fd, name, 0); nr != nil {
			return -1, nr
		}
		return -1, &fs.PathError{Op: "open", Path: d.Join(name), Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, &fs.PathError{Op: "fstat", Path: d.Join(name), Err: err}
	}
	if m := FileMode(uint32(st.Mode)); !m.IsRegular() {
		unix.Close(fd)
		return -1, &NotRegularError{m}
	}
	// F_SETFL sets the status flags whole, so it is given those of the open
	// it may set but O_NONBLOCK (O_APPEND, if asked for): one call, where
	// SetNonblock reads the flags first.
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFL, flags&unix.O_APPEND); err != nil {
		unix.Close(fd)
		return -1, &fs.PathError{Op: "fcntl", Path: d.Join(name), Err: err}
	}
	return fd, nil
}

// ReplaceFailure says why a replace failed, beyond its errno: nothing on
// Unix.
func (d *Dir) ReplaceFailure(string, error) (msg, remedy string) {
	return "cannot replace the record with the temp file", ""
}

// pathErr wraps a non-nil errno in an *fs.PathError.
func pathErr(op, path string, err error) error {
	if err == nil {
		return nil
	}
	return &fs.PathError{Op: op, Path: path, Err: err}
}

// IsTransientRead reports an error that passes: NFS reports ESTALE when a
// file was replaced under a cached handle; reopening finds the new file.
func IsTransientRead(err error) bool { return errors.Is(err, syscall.ESTALE) }

// IsStaleHandle reports ESTALE alone: a network filesystem's client still
// holds the handle of a file that another host replaced.
func IsStaleHandle(err error) bool { return errors.Is(err, syscall.ESTALE) }

// IsDirNotEmpty reports a rename refused because the target is a directory
// that is not empty.
func IsDirNotEmpty(err error) bool { return errors.Is(err, syscall.ENOTEMPTY) }

// IsNotDir reports a path that runs through something that is not a
// directory.
func IsNotDir(err error) bool { return errors.Is(err, syscall.ENOTDIR) }

// rawFile is a file descriptor with the methods the protocol and the
// readers use.
type rawFile int

func (f rawFile) Read(b []byte) (int, error) {
	for {
		n, err := syscall.Read(int(f), b)
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return 0, err
		case n == 0 && len(b) > 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

func (f rawFile) Write(b []byte) (int, error) {
	for {
		n, err := syscall.Write(int(f), b)
		if err != syscall.EINTR {
			return max(n, 0), err
		}
	}
}

// Sync is fsync(2), retried only when a signal interrupted it before it ran
// (as os.File.Sync does); a failed fsync is returned, never retried.
func (f rawFile) Sync() error {
	for {
		err := syscall.Fsync(int(f))
		if err != syscall.EINTR {
			return err
		}
	}
}

func (f rawFile) Stat() (fs.FileInfo, error) {
	var st unix.Stat_t
	for {
		err := unix.Fstat(int(f), &st)
		if err == nil {
			return statInfo("", &st), nil
		}
		if err != unix.EINTR {
			return nil, err
		}
	}
}

func (f rawFile) Close() error { return syscall.Close(int(f)) }

// rawInfo is the fs.FileInfo of a stat.
type rawInfo struct {
	name  string
	size  int64
	mode  fs.FileMode
	mtime time.Time
}

func (i rawInfo) Name() string       { return i.name }
func (i rawInfo) Size() int64        { return i.size }
func (i rawInfo) IsDir() bool        { return i.mode.IsDir() }
func (i rawInfo) ModTime() time.Time { return i.mtime }
func (i rawInfo) Sys() any           { return nil }
func (i rawInfo) Mode() fs.FileMode  { return i.mode }

// statInfo is the fs.FileInfo of a stat.
func statInfo(name string, st *unix.Stat_t) rawInfo {
	sec, nsec := st.Mtim.Unix()
	return rawInfo{name: name, size: st.Size, mode: FileMode(uint32(st.Mode)), mtime: time.Unix(sec, nsec)}
}

// FileMode is the fs.FileMode of a stat's st_mode: its permission bits and type.
func FileMode(m uint32) fs.FileMode {
	mode := fs.FileMode(m & 0o777)
	switch m & unix.S_IFMT {
	case unix.S_IFDIR:
		mode |= fs.ModeDir
	case unix.S_IFLNK:
		mode |= fs.ModeSymlink
	case unix.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		mode |= fs.ModeSocket
	case unix.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		mode |= fs.ModeDevice
	case unix.S_IFREG:
	default:
		mode |= fs.ModeIrregular
	}
	return mode
}
