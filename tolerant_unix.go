//go:build unix

package jobstore

import (
	"errors"
	"io"
	"io/fs"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// isTransientReadError: NFS reports ESTALE when a file was replaced under a
// cached handle; reopening finds the new file.
func isTransientReadError(err error) bool {
	return errors.Is(err, syscall.ESTALE)
}

// openRecord opens name with plain system calls: openat(O_NONBLOCK|
// O_NOFOLLOW), fstat, read until EOF, close. O_NONBLOCK keeps a FIFO or a
// device from blocking the open (readOnce refuses either after fstat; a
// regular file ignores the flag); O_NOFOLLOW refuses a link (ELOOP, or
// EMLINK/EFTYPE on some BSDs), and opening a socket fails with ENXIO: those
// are described by an fstatat on that error path only. os.Open would add
// four fcntl calls and a failed epoll registration per regular file on Linux
// (and an *os.File with its cleanup); List reads two records per job.
func (d dirHandle) openRecord(name string) (recordFile, error) {
	fd, err := openat(d.fd, name, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK|unix.O_NOFOLLOW, 0)
	if err == nil {
		return rawFile(fd), nil
	}
	if err != unix.ENOENT {
		if nr := notRegularAt(d.fd, name, 0); nr != nil {
			return nil, nr
		}
	}
	return nil, &fs.PathError{Op: "open", Path: filepath.Join(d.path, name), Err: err}
}

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
