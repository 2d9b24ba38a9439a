//go:build unix

package jobstore

import (
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// openLock: O_NOFOLLOW, so a planted link named job.lock fails (ELOOP)
// instead of creating its target; O_NONBLOCK, so a FIFO or a device there
// cannot block the open; then fstat refuses anything but a regular file.
func (d dirHandle) openLock(name string) (*os.File, error) {
	fd, err := openat(d.fd, name, unix.O_RDWR|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0o644)
	if err != nil {
		if nr := notRegularAt(d.fd, name, 0); nr != nil {
			return nil, nr
		}
		return nil, &fs.PathError{Op: "open", Path: filepath.Join(d.path, name), Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, &fs.PathError{Op: "fstat", Path: filepath.Join(d.path, name), Err: err}
	}
	if m := fileMode(uint32(st.Mode)); !m.IsRegular() {
		unix.Close(fd)
		return nil, &notRegularError{m}
	}
	// A regular file ignores O_NONBLOCK; clear it all the same, so that
	// os.NewFile gives a plain blocking *os.File.
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return nil, &fs.PathError{Op: "fcntl", Path: filepath.Join(d.path, name), Err: err}
	}
	return os.NewFile(uintptr(fd), filepath.Join(d.path, name)), nil
}
