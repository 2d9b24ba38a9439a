package jobstore

import (
	"os"

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
