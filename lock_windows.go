package jobstore

import (
	"errors"
	"io/fs"
	"os"

	"golang.org/x/sys/windows"
)

// The whole file's range, as Go's cmd/go/internal/lockedfile locks it. A
// lock taken through another handle (in this process or another) conflicts.
const allBytes = ^uint32(0)

func lockFile(f *os.File) error {
	return windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY,
		0, allBytes, allBytes, new(windows.Overlapped))
}

func unlockFile(f *os.File) error {
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, allBytes, allBytes, new(windows.Overlapped))
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
