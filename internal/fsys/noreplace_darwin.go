package fsys

import "golang.org/x/sys/unix"

// The no-replace rename and link(2) of macOS and iOS:
// renameatx_np(RENAME_EXCL), which APFS and HFS+ have.

// renameNoReplace renames from in the directory fromfd to to in the
// directory tofd unless to exists (EEXIST). moved is false with a nil error
// where the filesystem has no RENAME_EXCL, so the caller falls back to
// link(2) (a file) or rename(2) (a directory).
func renameNoReplace(fromfd int, from string, tofd int, to string) (moved bool, err error) {
	err = unix.RenameatxNp(fromfd, from, tofd, to, unix.RENAME_EXCL)
	switch err {
	case nil:
		return true, nil
	case unix.EINVAL, unix.ENOTSUP, unix.ENOSYS:
		return false, nil
	}
	return false, err
}
