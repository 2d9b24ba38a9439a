//go:build unix

package jobstore

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// isTransientReadError: NFS reports ESTALE when a file was replaced under a
// cached handle; reopening finds the new file.
func isTransientReadError(err error) bool {
	return errors.Is(err, syscall.ESTALE)
}

// openRecord opens path for reading, as os.Open does, minus the four fcntl
// calls and the failed epoll registration os.Open spends on a regular file on
// Linux (9 syscalls per read become 6): List reads two records per job.
func openRecord(path string) (*os.File, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err == nil {
			return os.NewFile(uintptr(fd), path), nil
		}
		if err != syscall.EINTR {
			return nil, &fs.PathError{Op: "open", Path: path, Err: err}
		}
	}
}
