package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// diskRates is what the disk under a directory allows, per second.
type diskRates struct {
	fileSync float64 // write of 64 bytes to a file, then fsync of the file
	dirSync  float64 // rename of a file over another, then fsync of the directory
	layout   float64 // a job's directory and two records made as jobstore lays them out, no fsync
	// runAtOnce: a drained job's fsyncs (see runSyncLoop) made by several
	// writers at once, each in a directory of its own: jobs per second, all
	// writers together.
	runAtOnce float64
}

// measureDisk runs each loop for d in a directory of its own under parent;
// the loop of a drained job's fsyncs (f's) with writers at once.
func measureDisk(parent string, d time.Duration, f fsyncCounts, writers int) (diskRates, error) {
	dir, err := os.MkdirTemp(parent, "fsync-")
	if err != nil {
		return diskRates{}, err
	}
	defer os.RemoveAll(dir)
	var r diskRates
	if r.fileSync, err = rate(d, fileSyncLoop(dir)); err != nil {
		return r, err
	}
	if r.dirSync, err = rate(d, dirSyncLoop(dir)); err != nil {
		return r, err
	}
	if r.layout, err = rate(d, layoutLoop(dir)); err != nil {
		return r, err
	}
	r.runAtOnce, err = rateAtOnce(d, writers, func(i int) (func() error, error) {
		sub := filepath.Join(dir, fmt.Sprintf("run-%d", i))
		if err := os.Mkdir(sub, 0o755); err != nil {
			return nil, err
		}
		return runSyncLoop(sub, f.runFiles, f.runDirs), nil
	})
	return r, err
}

// rateAtOnce runs n loops at once, each on its own goroutine with the step
// newStep(i) makes, until d has passed, and returns the steps per second
// of all n together.
func rateAtOnce(d time.Duration, n int, newStep func(i int) (func() error, error)) (float64, error) {
	steps := make([]func() error, n)
	for i := range n {
		step, err := newStep(i)
		if err != nil {
			return 0, err
		}
		steps[i] = step
	}
	var wg sync.WaitGroup
	counts, errs := make([]int, n), make([]error, n)
	start := time.Now()
	for i, step := range steps {
		wg.Go(func() {
			for time.Since(start) < d {
				if errs[i] = step(); errs[i] != nil {
					return
				}
				counts[i]++
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	total := 0
	for i := range n {
		if errs[i] != nil {
			return 0, errs[i]
		}
		total += counts[i]
	}
	return float64(total) / elapsed.Seconds(), nil
}

// runSyncLoop is the fsyncs of one drained job, in dir, and nothing else:
// files times a small write fsynced (a record's temp file), dirs times a
// rename fsynced in its directory (its publication), taken in turn as a
// job's two status writes take them.
func runSyncLoop(dir string, files, dirs int) func() error {
	file, dirSync := fileSyncLoop(dir), dirSyncLoop(dir)
	return func() error {
		for i := range max(files, dirs) {
			if i < files {
				if err := file(); err != nil {
					return err
				}
			}
			if i < dirs {
				if err := dirSync(); err != nil {
					return err
				}
			}
		}
		return nil
	}
}

// rate calls step until d has passed and returns its calls per second.
func rate(d time.Duration, step func() error) (float64, error) {
	start := time.Now()
	n := 0
	for time.Since(start) < d {
		if err := step(); err != nil {
			return 0, err
		}
		n++
	}
	return float64(n) / time.Since(start).Seconds(), nil
}

func fileSyncLoop(dir string) func() error {
	data := make([]byte, 64)
	path := filepath.Join(dir, "record")
	return func() error {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		if err != nil {
			return err
		}
		if _, err := f.Write(data); err != nil {
			f.Close()
			return err
		}
		if err := f.Sync(); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}
}

func dirSyncLoop(dir string) func() error {
	tmp, target := filepath.Join(dir, "next"), filepath.Join(dir, "current")
	return func() error {
		if err := os.WriteFile(tmp, []byte("x"), 0o644); err != nil {
			return err
		}
		if err := os.Rename(tmp, target); err != nil {
			return err
		}
		return syncDir(dir)
	}
}

// syncDir fsyncs the directory dir.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	if err := d.Sync(); err != nil {
		d.Close()
		return err
	}
	return d.Close()
}

// layoutLoop makes what one job is on disk, without a single fsync: a
// build directory, two small records each written to a temp file and
// renamed to its name, and the directory renamed into place. Its rate is
// what the file system's metadata work allows a writer that shares all of
// its fsyncs (a batch): the ceiling of a batched enqueue.
func layoutLoop(dir string) func() error {
	data := make([]byte, 128)
	n := 0
	return func() error {
		n++
		build := filepath.Join(dir, fmt.Sprintf(".build-%d", n))
		if err := os.Mkdir(build, 0o755); err != nil {
			return err
		}
		for _, name := range []string{"job.json", "status.json"} {
			tmp := filepath.Join(build, "."+name+".tmp")
			if err := os.WriteFile(tmp, data, 0o644); err != nil {
				return err
			}
			if err := os.Rename(tmp, filepath.Join(build, name)); err != nil {
				return err
			}
		}
		return os.Rename(build, filepath.Join(dir, fmt.Sprintf("job-%d", n)))
	}
}
