package jobstore

import (
	"errors"
	"io/fs"
	"os"
	"time"

	"golang.org/x/sys/windows"
)

// isTransientReadError: while MoveFileEx replaces a file, opening it fails
// with a sharing violation or access denied for a moment.
func isTransientReadError(err error) bool {
	return isSharingError(err)
}

// recordShare is how a reader shares the file it holds open: read, write
// and delete. Unlike os.Open (read and write only), it lets a writer replace
// the record while the reader has it open: a POSIX-semantics rename
// (moveFile) then succeeds at once, and the reader goes on reading the old
// file, complete.
const recordShare = windows.FILE_SHARE_READ | windows.FILE_SHARE_WRITE | windows.FILE_SHARE_DELETE

// A replace can look like a missing file on NTFS: a reader that opens the
// target while MoveFileEx replaces it may get ERROR_FILE_NOT_FOUND (seen by
// Microsoft's STL in std::filesystem). So a missing status.json next to a
// job.json is opened again, statusNotFoundRetries times statusNotFoundDelay
// apart, before the reader concludes that nothing has run yet. That is also
// the cost of reading a job that has no status.json yet, on Windows only.
const (
	statusNotFoundRetries = 3
	statusNotFoundDelay   = time.Millisecond
)

// openRecord opens name with FILE_FLAG_OPEN_REPARSE_POINT: a link is opened
// as itself (and refused by readOnce after Stat), never followed. Windows
// has no FIFOs or devices in a directory, so the open never blocks.
func (d dirHandle) openRecord(name string) (recordFile, error) {
	path := d.join(name)
	f, err := d.openFile(path, windows.GENERIC_READ, recordShare, windows.OPEN_EXISTING)
	if name == StatusFile && errors.Is(err, windows.ERROR_FILE_NOT_FOUND) {
		if _, serr := d.lstat(SpecFile); serr == nil {
			for i := 0; i < statusNotFoundRetries && errors.Is(err, windows.ERROR_FILE_NOT_FOUND); i++ {
				time.Sleep(statusNotFoundDelay)
				f, err = d.openFile(path, windows.GENERIC_READ, recordShare, windows.OPEN_EXISTING)
			}
		}
	}
	if err != nil {
		return nil, err // not a nil *os.File in a non-nil interface
	}
	return f, nil
}

// openNoFollow is CreateFile with FILE_FLAG_OPEN_REPARSE_POINT, and
// FILE_FLAG_BACKUP_SEMANTICS so that a directory opens (and is then refused
// by its Stat) instead of failing with access denied, which readers retry.
func openNoFollow(path string, access, share, disposition uint32) (*os.File, error) {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	h, err := windows.CreateFile(p, access, share, nil, disposition,
		windows.FILE_ATTRIBUTE_NORMAL|windows.FILE_FLAG_OPEN_REPARSE_POINT|windows.FILE_FLAG_BACKUP_SEMANTICS, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(h), path), nil
}
