package jobstore

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// renameNoReplace renames from to to unless to exists (EEXIST). moved is
// false with a nil error where the filesystem has no RENAME_NOREPLACE, so the
// caller falls back to link(2).
func renameNoReplace(from, to string) (moved bool, err error) {
	err = unix.Renameat2(unix.AT_FDCWD, from, unix.AT_FDCWD, to, unix.RENAME_NOREPLACE)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, unix.EINVAL), errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EOPNOTSUPP):
		return false, nil
	default:
		return false, &os.LinkError{Op: "renameat2", Old: from, New: to, Err: err}
	}
}
