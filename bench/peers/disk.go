package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// diskRates is what the disk under a directory allows, per second.
type diskRates struct {
	fileSync float64 // write of 64 bytes to a file, then fsync of the file
	dirSync  float64 // rename of a file over another, then fsync of the directory
	layout   float64 // a job's directory and two records made as jobstore lays them out, no fsync
}

// measureDisk runs each loop for d in a directory of its own under parent.
func measureDisk(parent string, d time.Duration) (diskRates, error) {
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
	r.layout, err = rate(d, layoutLoop(dir))
	return r, err
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
