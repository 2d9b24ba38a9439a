//go:build unix

package jobview

import (
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// openLogFileForRead opens dir/name for reading: dir without following a link,
// then name relative to it, without following a link and without
// blocking (a FIFO), and only if it is a regular file.
func openLogFileForRead(dir, name string) (*os.File, error) {
	dir = filepath.Clean(dir) // "dir/" or "dir/." would follow a link at dir
	dfd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err == unix.ELOOP || err == unix.ENOTDIR {
		return nil, &notRegularError{dir}
	}
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	defer unix.Close(dfd)
	path := filepath.Join(dir, name)
	fd, err := unix.Openat(dfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err == unix.ELOOP {
		return nil, &notRegularError{path}
	}
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	if err := closeUnlessRegular(fd, path, &notRegularError{path}); err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), path), nil
}

// closeUnlessRegular checks that fd, opened at path, is a regular file:
// else it closes fd and returns notRegular (or the fstat's error).
func closeUnlessRegular(fd int, path string, notRegular error) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return &os.PathError{Op: "fstat", Path: path, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return notRegular
	}
	return nil
}
