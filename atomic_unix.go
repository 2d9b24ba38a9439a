//go:build unix

package jobstore

import (
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// Confinement on Unix: a directory descriptor and the *at system calls with
// O_NOFOLLOW. The job directory is opened once with O_DIRECTORY|O_NOFOLLOW
// (a link there is refused, wherever it points), then every file of the job
// is renamed, opened and stat'ed relative to that descriptor, never
// following a link at the file's own name. That is stricter than os.Root
// (which follows links that stay inside the root), and readers pay nothing
// more than the open. The one step done through an os.Root is the temp
// file's creation, which renameio does (tempfile_unix.go): writers open a
// root of the same directory, check that it is the one the descriptor holds
// (a swap in between is refused), and let renameio create the file in it.

// dirHandle is an open directory: its descriptor and its path (for errors
// and for the temp file's os.Root, see tempRoot).
type dirHandle struct {
	fd   int
	path string
	job  bool // opened with O_NOFOLLOW: a link in its place is refused
}

// openDir opens dir for the dirOps. With job set, dir's last element must
// be a directory itself: O_NOFOLLOW refuses a link whatever it points to.
func openDir(dir string, job bool) (dirHandle, error) {
	flags := unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC
	if job {
		flags |= unix.O_NOFOLLOW
	}
	fd, err := openat(unix.AT_FDCWD, dir, flags, 0)
	if err == nil {
		return dirHandle{fd: fd, path: dir, job: job}, nil
	}
	// ELOOP (Linux, macOS), EMLINK (FreeBSD), EFTYPE (NetBSD) or ENOTDIR:
	// say what is there instead of a directory.
	if nr := notRegularAt(unix.AT_FDCWD, dir, fs.ModeDir); nr != nil && err != unix.ENOENT {
		return dirHandle{fd: -1}, nr
	}
	return dirHandle{fd: -1}, &fs.PathError{Op: "open", Path: dir, Err: err}
}

// notRegularAt describes name when it is not of type want (0 for a regular
// file), without following a link; nil if it is, or cannot be seen.
func notRegularAt(dirfd int, name string, want fs.FileMode) *notRegularError {
	var st unix.Stat_t
	if err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return nil
	}
	if m := fileMode(uint32(st.Mode)); m.Type() != want {
		return &notRegularError{m}
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

func (d dirHandle) close() error { return unix.Close(d.fd) }

func (d dirHandle) replace(tmp, name string, _ bool) error {
	return unix.Renameat(d.fd, tmp, d.fd, name)
}

func (d dirHandle) publishNew(tmp, name string, _ bool) (linked bool, err error) {
	moved, err := renameNoReplace(d.fd, tmp, name)
	if err != nil || moved {
		return false, err
	}
	// No no-replace rename here: link(2) fails with EEXIST on a taken name
	// just the same, and leaves the temp name for the caller to remove.
	return true, linkAt(d, tmp, name)
}

func (d dirHandle) remove(name string) error {
	if err := unix.Unlinkat(d.fd, name, 0); err != nil {
		return &fs.PathError{Op: "remove", Path: filepath.Join(d.path, name), Err: err}
	}
	return nil
}

func (d dirHandle) sync() error {
	err := unix.Fsync(d.fd)
	for err == unix.EINTR { // interrupted before it ran (as os.File.Sync retries); not a failed fsync
		err = unix.Fsync(d.fd)
	}
	if err == unix.EINVAL || err == unix.ENOTSUP || err == unix.EOPNOTSUPP {
		return nil // some filesystems cannot fsync a directory; nothing more to do there
	}
	return err
}

func (d dirHandle) lstat(name string) (fs.FileInfo, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return nil, &fs.PathError{Op: "lstat", Path: filepath.Join(d.path, name), Err: err}
	}
	return statInfo(name, &st), nil
}

func (d dirHandle) names() ([]string, error) {
	fd, err := openat(d.fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: d.path, Err: err}
	}
	f := os.NewFile(uintptr(fd), d.path)
	defer f.Close()
	return f.Readdirnames(-1)
}

// statInfo is the fs.FileInfo of a stat.
func statInfo(name string, st *unix.Stat_t) rawInfo {
	sec, nsec := st.Mtim.Unix()
	return rawInfo{name: name, size: st.Size, mode: fileMode(uint32(st.Mode)), mtime: time.Unix(sec, nsec)}
}

// fileMode is the fs.FileMode of a stat's st_mode.
func fileMode(m uint32) fs.FileMode {
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

// replaceFailure: on Unix a failed rename needs no more words than its errno.
func replaceFailure(dirHandle, string, error) (msg, remedy string) {
	return "cannot replace the record with the temp file", ""
}
