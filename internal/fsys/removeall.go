package fsys

import (
	"errors"
	"io/fs"
)

// removeRounds bounds how often RemoveAll looks at a name again after a
// removal failed: the name changed type meanwhile (a directory swapped for
// a link, or the reverse), or a directory was refilled while it was
// emptied (a writer that still had it open).
const removeRounds = 3

// RemoveAll removes name from d, and first everything in it if it is a
// directory, one name at a time, each relative to the directory that holds
// it, opened without following a link. A symbolic link, a junction, a FIFO,
// a socket or a device is removed as a name: a link's target is never
// touched, and nothing is opened that could block. A directory is opened
// only as a directory (O_NOFOLLOW on Unix, not a reparse point on Windows),
// so a directory swapped for a link meanwhile is removed as a link on the
// next round. A directory on another filesystem than its parent (a mount
// point, on Unix) is never entered: it is an *fs.PathError matching
// ErrMountPoint, and nothing below it is touched. A name that is already
// gone is not an error.
//
// On Windows a read-only file is removed as well (Remove clears the
// attribute), and a removal that another process's open handle refuses
// (a handle without FILE_SHARE_DELETE, a virus scanner) is retried as
// RetryBusy does. Each directory handle RemoveAll holds is closed before
// that directory is removed.
//
// The errors of the names that could not be removed are joined; the names
// that could be are gone. Depth costs one open directory per level.
func (d *Dir) RemoveAll(name string) error {
	var err error
	for range removeRounds {
		var fi fs.FileInfo
		fi, err = d.Lstat(name)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil
		case err != nil:
			return err
		case fi.IsDir():
			err = d.removeTree(name)
		default:
			err = RetryBusy(func() error { return d.Unlink(name) })
		}
		switch {
		case err == nil, errors.Is(err, fs.ErrNotExist):
			return nil
		case errors.Is(err, ErrMountPoint):
			return err // looking again changes nothing
		}
	}
	return err
}

// ErrMountPoint: RemoveAll found a directory on another filesystem than its
// parent, and left it.
var ErrMountPoint = errors.New("a mount point (another filesystem), which is never entered")

// removeTree empties the directory name of d, then removes it.
func (d *Dir) removeTree(name string) error {
	sub, err := d.OpenDir(name)
	if err != nil {
		return err
	}
	if mount, err := crossesDevice(d, sub); err != nil || mount {
		sub.Close()
		if mount {
			err = &fs.PathError{Op: "remove", Path: d.Join(name), Err: ErrMountPoint}
		}
		return err
	}
	names, err := sub.Names()
	errs := []error{err}
	for _, n := range names {
		errs = append(errs, sub.RemoveAll(n))
	}
	sub.Close() // before the directory is removed: on Windows the handle pins it
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return RetryBusy(func() error { return d.RemoveDir(name) })
}
