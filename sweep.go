package jobstore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
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
// ErrInvalid.
func SweepTemps(dir JobDir, olderThan time.Duration) (removed []string, err error) {
	const op = "sweep temp files"
	if olderThan < 0 {
		return nil, errInvalid(op, string(dir), "olderThan", olderThan, "a duration >= 0", fmt.Sprintf("%v is negative", olderThan), "pass a duration >= 0")
	}
	des, err := os.ReadDir(string(dir))
	if err != nil {
		return nil, errIO(op, string(dir), err, "cannot read the directory", "check the path and permissions")
	}
	cutoff := time.Now().Add(-olderThan)
	var errs []error
	for _, de := range des {
		if !IsTempName(de.Name()) || !de.Type().IsRegular() {
			continue
		}
		fi, err := de.Info()
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !fi.ModTime().Before(cutoff) {
			continue
		}
		path := filepath.Join(string(dir), de.Name())
		if err := os.Remove(path); err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
			continue
		}
		removed = append(removed, de.Name())
	}
	if len(errs) > 0 {
		return removed, errIO(op, string(dir), errors.Join(errs...), "cannot remove some temp files",
			"check the permissions of the directory; the files are safe to remove by hand")
	}
	return removed, nil
}
