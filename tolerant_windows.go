package jobstore

import (
	"io/fs"
	"os"

	"golang.org/x/sys/windows"
)

// isTransientReadError: while MoveFileEx replaces a file, opening it fails
// with a sharing violation or access denied for a moment.
func isTransientReadError(err error) bool {
	return isSharingError(err)
}

// recordShare is how a reader shares the file it holds open: as os.Open
// does (read and write).
const recordShare = windows.FILE_SHARE_READ | windows.FILE_SHARE_WRITE

// openRecord opens name with FILE_FLAG_OPEN_REPARSE_POINT: a link is opened
// as itself (and refused by readOnce after Stat), never followed. Windows
// has no FIFOs or devices in a directory, so the open never blocks.
func (d dirHandle) openRecord(name string) (recordFile, error) {
	f, err := openNoFollow(d.join(name), windows.GENERIC_READ, recordShare, windows.OPEN_EXISTING)
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
