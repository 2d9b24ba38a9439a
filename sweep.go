package jobstore

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/axqua/jobstore/internal/attempt"
)

// DefaultSweepAge is how old a temp file must be before ReconcileAll removes
// it. A live writer holds its temp file for milliseconds (seconds on a slow
// disk); a quarter of an hour leaves any live writer alone.
const DefaultSweepAge = 15 * time.Minute

// SweepTemps removes the temp files a crashed writer left in dir: names for
// which IsTempName is true, regular files, last modified more than olderThan
// ago. It also sweeps, by the same rule, the .fenced-N directories of
// attempts that are over (a runner fenced while writing may leave its temp
// file there; no writer ever uses that directory again), and returns those
// names as ".fenced-N/<name>". It leaves alone everything else: the records,
// a younger temp file (left to its writer), the .run-N directory of an
// attempt not yet over (its live runner's temp files, owner.json and
// lease), and the .fenced-N directories themselves and their fence marker,
// which must stay forever so that nobody revives the attempt.
//
// It returns the names removed (base names, or relative to dir as above). A
// file that vanished meanwhile (another sweeper, its writer) is not an
// error; other failures are reported after the sweep went on with the rest.
// olderThan < 0 is ErrInvalid, and so is a dir whose last element is not a
// job ID (Subject "job_id"): a root is swept by ReconcileAll and
// RebuildIndex, never as a job directory. dir must not be a symbolic link
// (ErrNotRegular), and neither is a .fenced-N followed: the sweep removes
// names relative to the directory it opened, never through a link.
func SweepTemps(dir JobDir, olderThan time.Duration) (removed []string, err error) {
	const op = "sweep temp files"
	if err := checkJobDir(op, dir); err != nil {
		return nil, err
	}
	if olderThan < 0 {
		return nil, errInvalid(op, string(dir), "olderThan", olderThan, "a duration >= 0", fmt.Sprintf("%v is negative", olderThan), "pass a duration >= 0")
	}
	cutoff := time.Now().Add(-olderThan)
	removed, fenced, errs, err := sweepDir(op, jobRecord(dir, ""), cutoff)
	if err != nil {
		return nil, err
	}
	for _, name := range fenced {
		more, _, ferrs, err := sweepDir(op, recordAt{dir: filepath.Join(string(dir), name), job: true}, cutoff)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			errs = append(errs, err)
		}
		for _, m := range more {
			removed = append(removed, filepath.Join(name, m))
		}
		errs = append(errs, ferrs...)
	}
	if len(errs) > 0 {
		return removed, errIO(op, string(dir), errors.Join(errs...), "cannot remove some temp files",
			"check the permissions of the directory; the files are safe to remove by hand")
	}
	return removed, nil
}

// sweepDir removes the old temp files directly in at.dir (see SweepTemps)
// and lists the .fenced-N names it holds. err is for the directory itself;
// errs for the files.
func sweepDir(op string, at recordAt, cutoff time.Time) (removed, fenced []string, errs []error, err error) {
	d, err := openDirAt(op, at)
	if err != nil {
		return nil, nil, nil, err
	}
	defer d.Close()
	names, err := d.Names()
	if err != nil {
		return nil, nil, nil, errIO(op, at.dir, err, "cannot read the directory", "check the path and permissions")
	}
	for _, name := range names {
		if _, isFenced, ok := attempt.Parse(name); ok && isFenced {
			fenced = append(fenced, name)
			continue
		}
		if !IsTempName(name) {
			continue
		}
		fi, err := d.Lstat(name)
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
		if err := d.Remove(name); err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
			continue
		}
		removed = append(removed, name)
	}
	return removed, fenced, errs, nil
}
