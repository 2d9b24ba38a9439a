package jobstore

import (
	"errors"
	"io/fs"
	"os"

	"golang.org/x/sys/windows"
)

// A Windows lock is mandatory: no other handle may read the range it
// covers. So the lock covers one byte at offset 2^62, far beyond the holder
// record at the start of the file (see lockHolder), which losers must read.
// Locking beyond the end of a file is allowed, and the byte lies inside the
// whole-file range (offset 0, length 2^64-1) that releases before the
// holder record locked, so the two still exclude each other.
const (
	lockOffsetHigh = 1 << 30 // offset 2^62, in its high 32 bits
	lockLen        = 1
)

func lockRange() *windows.Overlapped { return &windows.Overlapped{OffsetHigh: lockOffsetHigh} }

func lockFile(f *os.File) error {
	return windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY,
		0, lockLen, 0, lockRange())
}

func unlockFile(f *os.File) error {
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, lockLen, 0, lockRange())
}

func isLockHeld(err error) bool {
	return errors.Is(err, windows.ERROR_LOCK_VIOLATION) || errors.Is(err, windows.ERROR_IO_PENDING)
}

// openLock opens or creates job.lock without following a link at its name
// (FILE_FLAG_OPEN_REPARSE_POINT); anything but a regular file is refused.
func (d dirHandle) openLock(name string) (*os.File, error) {
	f, err := openNoFollow(d.join(name), windows.GENERIC_READ|windows.GENERIC_WRITE,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE, windows.OPEN_ALWAYS)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, &fs.PathError{Op: "stat", Path: f.Name(), Err: err}
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, &notRegularError{fi.Mode()}
	}
	return f, nil
}
