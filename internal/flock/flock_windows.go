package flock

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// A Windows lock is mandatory: no other handle may read the range it
// covers. So the lock covers one byte at offset 2^62, far beyond any
// content: the holder record at the start of job.lock must stay readable by
// the processes that fail to lock it. Locking beyond the end of a file is
// allowed, and the byte lies inside the whole-file range (offset 0, length
// 2^64-1) that releases before the holder record locked, so the two still
// exclude each other.
const (
	lockOffsetHigh = 1 << 30 // offset 2^62, in its high 32 bits
	lockLen        = 1
)

func lockRange() *windows.Overlapped { return &windows.Overlapped{OffsetHigh: lockOffsetHigh} }

func lock(f *os.File) error {
	return windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY,
		0, lockLen, 0, lockRange())
}

func unlock(f *os.File) error {
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, lockLen, 0, lockRange())
}

func isHeld(err error) bool {
	return errors.Is(err, windows.ERROR_LOCK_VIOLATION) || errors.Is(err, windows.ERROR_IO_PENDING)
}
