//go:build unix

package jobstore

import (
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// renameDirNoReplace renames a directory unless the target exists: with
// RENAME_NOREPLACE where the filesystem has it, else rename(2), which
// replaces only an empty directory (a fenced attempt's directory is empty
// only if its claimant died before writing owner.json).
func renameDirNoReplace(from, to string) error {
	moved, err := renameNoReplace(unix.AT_FDCWD, from, to)
	if moved || err != nil {
		return err
	}
	return os.Rename(from, to)
}

// isDirNotEmpty reports a rename refused because the target is a directory
// that is not empty.
func isDirNotEmpty(err error) bool { return errors.Is(err, syscall.ENOTEMPTY) }

// isNotDir reports a path that runs through something that is not a
// directory.
func isNotDir(err error) bool { return errors.Is(err, syscall.ENOTDIR) }
