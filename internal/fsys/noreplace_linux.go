package fsys

import "golang.org/x/sys/unix"

// The no-replace rename and link(2) of Linux: renameat2(RENAME_NOREPLACE),
// which tmpfs, ext4, xfs, btrfs and FUSE have (others answer EINVAL).

// renameNoReplace renames from in the directory fromfd to to in the
// directory tofd unless to exists (EEXIST). moved is false with a nil error
// where the filesystem has no RENAME_NOREPLACE, so the caller falls back to
// link(2) (a file) or rename(2) (a directory).
func renameNoReplace(fromfd int, from string, tofd int, to string) (moved bool, err error) {
	err = unix.Renameat2(fromfd, from, tofd, to, unix.RENAME_NOREPLACE)
	switch err {
	case nil:
		return true, nil
	case unix.EINVAL, unix.ENOSYS, unix.EOPNOTSUPP:
		return false, nil
	}
	return false, err
}
