package main

import (
	"fmt"
	"io"
	"slices"
)

// fsyncCounts is how many fsyncs jobstore spends per job, counted with
// strace (docs/benchmarks.md shows the command).
type fsyncCounts struct {
	submitFiles, submitDirs int // one Submit
	runFiles, runDirs       int // one job started and finished by a Worker
}

// ceiling is the jobs per second that files and dirs fsyncs per job allow
// when each fsync waits for the one before: the rates of a serial caller.
func ceiling(files, dirs int, d diskRates) float64 {
	return 1 / (float64(files)/d.fileSync + float64(dirs)/d.dirSync)
}

// medianDisk is the median of each rate over the rounds.
func medianDisk(rounds []diskRates) diskRates {
	var files, dirs, layouts []float64
	for _, r := range rounds {
		files = append(files, r.fileSync)
		dirs = append(dirs, r.dirSync)
		layouts = append(layouts, r.layout)
	}
	slices.Sort(files)
	slices.Sort(dirs)
	slices.Sort(layouts)
	return diskRates{fileSync: files[len(files)/2], dirSync: dirs[len(dirs)/2], layout: layouts[len(layouts)/2]}
}

func printDisk(w io.Writer, c config, rounds []diskRates) {
	f := c.fsyncs
	d := medianDisk(rounds)
	fmt.Fprintf(w, "\nThe fsync loops ran once per round, before the systems; medians of %d rounds.", len(rounds))
	fmt.Fprintf(w, "\nThe disk under %s: %.0f write+fsync of a small file per second, %.0f rename+directory fsync per second.\n",
		c.dir, d.fileSync, d.dirSync)
	fmt.Fprintf(w, "jobstore enqueue, one at a time: %d file + %d directory fsyncs per job: ceiling 1 / (%d/%.0f + %d/%.0f) = %.0f jobs/s\n",
		f.submitFiles, f.submitDirs, f.submitFiles, d.fileSync, f.submitDirs, d.dirSync, ceiling(f.submitFiles, f.submitDirs, d))
	fmt.Fprintf(w, "jobstore drain, 1 at a time: %d file + %d directory fsyncs per job: ceiling 1 / (%d/%.0f + %d/%.0f) = %.0f jobs/s\n",
		f.runFiles, f.runDirs, f.runFiles, d.fileSync, f.runDirs, d.dirSync, ceiling(f.runFiles, f.runDirs, d))
	fmt.Fprintf(w, "jobstore enqueue, in batches (fsyncs shared): one writer makes a job's directory and two records (temp file, rename) with no fsync %.0f times a second: a batch's ceiling on this file system, whatever it shares\n",
		d.layout)
}
