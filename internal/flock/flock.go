// Package flock takes exclusive file locks that never wait, in the shape of
// Go's cmd/go/internal/lockedfile/internal/filelock: flock(2) on Unix,
// LockFileEx on Windows, and errors matching errors.ErrUnsupported where
// there is no lock of that kind.
package flock

import "os"

// Lock takes an exclusive lock on f without waiting. If another open of the
// file holds the lock, Lock fails at once with an error for which IsHeld is
// true; any other failure is returned as the system reported it.
//
// The lock belongs to f's open file description (Unix) or handle (Windows),
// not to the process: a second os.Open of the same file conflicts with it,
// in this process as in any other, while descriptors duplicated from f
// (dup, inheritance by a child process) share it. It is released by Unlock,
// and by the system when every descriptor of that open file is closed, in
// particular when the holding process exits or is killed.
//
// On Unix the lock is advisory: it stops only other Lock calls, never a
// read or a write. On Windows it covers one byte far beyond the file's
// content (see flock_windows.go), so the content stays readable and
// writable by others too. Locking an f that already holds the lock is
// unspecified. Where the file's filesystem does not support locks (some
// network filesystems), Lock fails with the system's error, or may succeed
// without excluding other hosts: that depends on the filesystem.
//
// On aix, hurd, solaris and illumos, and on systems that are neither Unix
// nor Windows, Lock fails with an error matching errors.ErrUnsupported.
func Lock(f *os.File) error { return lock(f) }

// Unlock releases the lock f holds. Unlocking an f that holds no lock is
// unspecified. Where Lock is unsupported, so is Unlock.
func Unlock(f *os.File) error { return unlock(f) }

// IsHeld reports whether err, returned by Lock, means that another open of
// the file holds the lock.
func IsHeld(err error) bool { return isHeld(err) }
