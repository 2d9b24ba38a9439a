package jobstore

import (
	"cmp"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/axqua/jobstore/internal/fsys"
)

// Entry is one job as List found it.
type Entry struct {
	Dir    JobDir
	Spec   *JobSpec   // nil if unreadable
	Status *JobStatus // nil if no status yet or unreadable
	Err    error      // per-entry problem; one bad job never fails List
}

// List reads every job under root: job.json and status.json of each
// directory, in parallel (at most runtime.GOMAXPROCS(0) at a time), with the
// same tolerant readers and rules as ReadSpec and ReadStatus.
//
// It skips dot-names (temp files, hidden directories), index.json and
// anything that is not a directory (a symlink included). Every other
// directory is an Entry: a directory without job.json has Err of kind
// ErrNotJob; an unreadable job.json (one whose job_id is not the
// directory's name included) leaves Spec nil and sets Err, and status.json
// is still read for what it tells; an unreadable status.json sets Err with
// Spec kept. A record that is not a regular file (a FIFO, a
// socket, a device, a link) is ErrNotRegular in that entry's Err, at once:
// it is never opened for reading in a way that blocks. A damaged record costs the tolerant reader's
// retries (DefaultReadAttempts reads, DefaultReadDelay apart: about 150 ms),
// which the workers spend in parallel with the other jobs.
//
// A job removed while List reads it (Remove renames its directory out of
// the root before it deletes anything) is left out: List shows a job whole
// or not at all, never its job.json without its status.
//
// Order: jobs with a spec by submitted_at, then ID; then those without one,
// by ID. The error is for root itself: missing or unreadable.
func List(root string) ([]Entry, error) {
	dirs, err := jobDirs("list", root)
	if err != nil {
		return nil, err
	}
	entries := make([]Entry, len(dirs))
	gone := make([]bool, len(dirs))
	parallel(len(dirs), func(i int) { entries[i], gone[i] = readEntry(dirs[i]) })
	kept := entries[:0]
	for i, e := range entries {
		if !gone[i] {
			kept = append(kept, e)
		}
	}
	slices.SortFunc(kept, compareEntries)
	return kept, nil
}

func compareEntries(a, b Entry) int {
	switch {
	case a.Spec != nil && b.Spec != nil:
		if c := a.Spec.SubmittedAt.Compare(b.Spec.SubmittedAt); c != 0 {
			return c
		}
	case a.Spec != nil:
		return -1
	case b.Spec != nil:
		return 1
	}
	return cmp.Compare(a.Dir.ID(), b.Dir.ID())
}

// readEntry reads one job for List, opening its directory once for both
// records (never through a link). gone reports a job removed meanwhile:
// its directory vanished before it was opened, or it was renamed out of
// the root (Remove) while its records were read, which a record found
// missing tells (Remove deletes job.json first, status.json last).
func readEntry(dir JobDir) (e Entry, gone bool) {
	d, err := openJobDir("read spec", dir)
	if err != nil {
		return Entry{Dir: dir, Err: err}, errors.Is(err, ErrNotJob) // listed as a directory a moment ago
	}
	defer d.Close()
	e, done, gone := readEntrySpec(d)
	if done {
		return e, gone
	}
	return readEntryStatus(d, e)
}

// readEntrySpec is readEntry's first step, in the job directory d: job.json.
// done reports an entry that is complete without its status: no job.json
// (gone, if the directory moved away).
func readEntrySpec(d *fsys.Dir) (e Entry, done, gone bool) {
	dir := jobDir(d)
	e = Entry{Dir: dir}
	spec, err := readSpecIn(d, newReadOptions(nil), specSchema())
	switch {
	case errors.Is(err, ErrNotJob):
		e.Err = err
		moved, _ := movedAway(d)
		return e, true, moved
	case err != nil:
		e.Err = err
	default:
		e.Spec = &spec
	}
	return e, false, false
}

// readEntryStatus is readEntry's second step: status.json, into e. A
// status.json missing while job.json is gone too is a job removed between
// the two steps (gone, if the directory moved away).
func readEntryStatus(d *fsys.Dir, e Entry) (Entry, bool) {
	dir := jobDir(d)
	st, err := readStatusIn(d, newReadOptions(nil), statusSchema())
	if err != nil && e.Err == nil {
		e.Err = err
	}
	e.Status = st
	if err == nil && st == nil && e.Spec != nil {
		if _, serr := d.Lstat(SpecFile); errors.Is(serr, fs.ErrNotExist) {
			moved, _ := movedAway(d)
			e.Spec, e.Err = nil, errNotJob("read spec", dir)
			return e, moved
		}
	}
	return e, false
}

// JobDirs returns the job directories under root without reading them, as
// List and ReconcileAll find them: every directory whose name is not a
// dot-name (temp files, hidden directories), in name order. A symlink is not
// followed. The error is for root itself: missing or unreadable.
func JobDirs(root string) ([]JobDir, error) { return jobDirs("list jobs", root) }

// jobDirs is JobDirs with op named in the error.
func jobDirs(op, root string) ([]JobDir, error) {
	des, err := os.ReadDir(root)
	if err != nil {
		return nil, errReadRoot(op, root, err)
	}
	dirs := make([]JobDir, 0, len(des))
	for _, de := range des {
		name := de.Name()
		if !isJobName(name) || !de.IsDir() {
			continue
		}
		dirs = append(dirs, JobDir(filepath.Join(root, name)))
	}
	return dirs, nil
}

// errReadRoot is the error of a jobs root that cannot be read.
func errReadRoot(op, root string, err error) error {
	remedy := "check the path: the root is the directory that holds the job directories (the first Submit creates it)"
	if errors.Is(err, fs.ErrPermission) {
		remedy = "give this user read and search permission on the jobs root"
	}
	return errIO(op, root, err, "cannot read the jobs root", remedy)
}

// parallel calls fn(0..n-1) on at most GOMAXPROCS goroutines and waits.
func parallel(n int, fn func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for j := int(next.Add(1) - 1); j < n; j = int(next.Add(1) - 1) {
				fn(j)
			}
		})
	}
	wg.Wait()
}
