package jobstore

import (
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/windows"
)

// renameDirNoReplace is MoveFileEx without MOVEFILE_REPLACE_EXISTING: it
// fails if the target exists (os.Rename would ask to replace it).
func renameDirNoReplace(from, to string) error {
	f, err := windows.UTF16PtrFromString(from)
	if err != nil {
		return err
	}
	t, err := windows.UTF16PtrFromString(to)
	if err != nil {
		return err
	}
	if err := windows.MoveFileEx(f, t, 0); err != nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
	return nil
}

// isDirNotEmpty reports a rename refused because the target is a directory
// that is not empty.
func isDirNotEmpty(err error) bool { return errors.Is(err, syscall.ENOTEMPTY) }

// isNotDir reports a path that runs through something that is not a
// directory.
func isNotDir(err error) bool { return errors.Is(err, syscall.ENOTDIR) }
