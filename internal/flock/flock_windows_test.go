package flock

import (
	"os"
	"testing"

	"golang.org/x/sys/windows"
)

// lockWholeFile locks f from offset 0 for 2^64-1 bytes, as a whole-file
// lock does.
func lockWholeFile(f *os.File) error {
	return windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY,
		0, ^uint32(0), ^uint32(0), &windows.Overlapped{})
}

// Lock's one byte at 2^62 lies inside a whole-file lock's range: each
// excludes the other.
func TestLock_ExcludesAWholeFileLock(t *testing.T) {
	path := lockFile(t, "")
	a, b := open(t, path), open(t, path)

	mustLock(t, a)
	if err := lockWholeFile(b); !IsHeld(err) {
		t.Fatalf("whole-file lock while Lock holds its byte: %v", err)
	}
	if err := Unlock(a); err != nil {
		t.Fatal(err)
	}

	if err := lockWholeFile(b); err != nil {
		t.Fatalf("whole-file lock on a free file: %v", err)
	}
	mustBeHeld(t, a)
}
