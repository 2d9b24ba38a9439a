package jobstore

import "golang.org/x/sys/unix"

// renameNoReplace renames from to to in the directory dirfd unless to exists
// (EEXIST). moved is false with a nil error where the filesystem has no
// RENAME_NOREPLACE, so the caller falls back to link(2).
func renameNoReplace(dirfd int, from, to string) (moved bool, err error) {
	err = unix.Renameat2(dirfd, from, dirfd, to, unix.RENAME_NOREPLACE)
	switch err {
	case nil:
		return true, nil
	case unix.EINVAL, unix.ENOSYS, unix.EOPNOTSUPP:
		return false, nil
	}
	return false, err
}

// linkAt gives the file tmp in d the second name name (link(2)), failing
// with EEXIST if name is taken.
func linkAt(d dirHandle, tmp, name string) error { return unix.Linkat(d.fd, tmp, d.fd, name, 0) }
