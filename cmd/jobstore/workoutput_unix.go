//go:build unix

package main

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// openOutput opens name in the job directory dir for reading and writing
// (not appending: cappedLog keeps the offset, and cuts the file's start),
// creating it 0644. Nothing is followed through a symbolic link, and anything but a
// regular file (a FIFO, which would block the open, a device) is refused.
func openOutput(dir, name string) (*os.File, error) {
	path := filepath.Join(dir, name)
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	if err := closeUnlessRegular(fd, path, fmt.Errorf("%s is not a regular file", path)); err != nil {
		return nil, err
	}
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return nil, &os.PathError{Op: "fcntl", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}
