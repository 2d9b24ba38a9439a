package jobstore

import (
	"errors"
	"fmt"
	"io/fs"
	"time"
)

// DefaultSweepAge is how old a temp file must be before ReconcileAll removes
// it. A live writer holds its temp file for milliseconds (seconds on a slow
// disk); a quarter of an hour leaves any live writer alone.
const DefaultSweepAge = 15 * time.Minute

// SweepTemps removes the temp files a crashed writer left in dir: names for
// which IsTempName is true, regular files, last modified more than olderThan
// ago. Nothing else is ever removed, and a younger temp file is left to its
// writer. It returns the names removed (base names). A file that vanished
// meanwhile (another sweeper, its writer) is not an error; other failures are
// reported after the sweep went on with the rest. olderThan < 0 is
// ErrInvalid. dir must not be a symbolic link (ErrNotRegular): the sweep
// removes names relative to the directory it opened, never through a link.
func SweepTemps(dir JobDir, olderThan time.Duration) (removed []string, err error) {
	const op = "sweep temp files"
	if olderThan < 0 {
		return nil, errInvalid(op, string(dir), "olderThan", olderThan, "a duration >= 0", fmt.Sprintf("%v is negative", olderThan), "pass a duration >= 0")
	}
	d, err := openDirAt(op, jobRecord(dir, ""))
	if err != nil {
		return nil, err
	}
	defer d.close()
	names, err := d.names()
	if err != nil {
		return nil, errIO(op, string(dir), err, "cannot read the directory", "check the path and permissions")
	}
	cutoff := time.Now().Add(-olderThan)
	var errs []error
	for _, name := range names {
		if !IsTempName(name) {
			continue
		}
		fi, err := d.lstat(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !fi.Mode().IsRegular() || !fi.ModTime().Before(cutoff) {
			continue
		}
		if err := d.remove(name); err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
			continue
		}
		removed = append(removed, name)
	}
	if len(errs) > 0 {
		return removed, errIO(op, string(dir), errors.Join(errs...), "cannot remove some temp files",
			"check the permissions of the directory; the files are safe to remove by hand")
	}
	return removed, nil
}
