//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package flock

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// lock takes an flock(2) lock, not fcntl: an flock lock belongs to the open file description,
// so two opens in one process conflict as two processes do, and closing
// some other descriptor of the file does not drop it.
func lock(f *os.File) error {
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

func unlock(f *os.File) error { return unix.Flock(int(f.Fd()), unix.LOCK_UN) }

func isHeld(err error) bool { return errors.Is(err, unix.EWOULDBLOCK) }
