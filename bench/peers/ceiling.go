package main

import (
	"fmt"
	"io"
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
	med := func(of func(diskRates) float64) float64 {
		var v []float64
		for _, r := range rounds {
			v = append(v, of(r))
		}
		m, _, _ := summary(v)
		return m
	}
	return diskRates{
		fileSync:  med(func(r diskRates) float64 { return r.fileSync }),
		dirSync:   med(func(r diskRates) float64 { return r.dirSync }),
		layout:    med(func(r diskRates) float64 { return r.layout }),
		runAtOnce: med(func(r diskRates) float64 { return r.runAtOnce }),
	}
}

// printDisk prints the fsync loops' rates and the ceilings they set; fs
// says what file system holds c.dir (fileSystemOf), "" if unknown.
func printDisk(w io.Writer, c config, rounds []diskRates, fs string) {
	f := c.fsyncs
	d := medianDisk(rounds)
	under := c.dir
	if fs != "" {
		under += " (" + fs + ")"
	}
	fmt.Fprintf(w, "\nThe fsync loops ran once per round, before the systems; medians of %d rounds.", len(rounds))
	fmt.Fprintf(w, "\nThe disk under %s: %.0f write+fsync of a small file per second, %.0f rename+directory fsync per second.\n",
		under, d.fileSync, d.dirSync)
	fmt.Fprintf(w, "jobstore enqueue, one at a time: %d file + %d directory fsyncs per job: ceiling 1 / (%d/%.0f + %d/%.0f) = %.0f jobs/s\n",
		f.submitFiles, f.submitDirs, f.submitFiles, d.fileSync, f.submitDirs, d.dirSync, ceiling(f.submitFiles, f.submitDirs, d))
	fmt.Fprintf(w, "jobstore drain, 1 at a time: %d file + %d directory fsyncs per job: ceiling 1 / (%d/%.0f + %d/%.0f) = %.0f jobs/s\n",
		f.runFiles, f.runDirs, f.runFiles, d.fileSync, f.runDirs, d.dirSync, ceiling(f.runFiles, f.runDirs, d))
	fmt.Fprintf(w, "jobstore drain, %d at a time: the same fsyncs of %d jobs at once (a Worker at %d writes at most %d starts and %d ends at once), each in a directory of its own, nothing else: %.0f jobs/s (measured)\n",
		c.parallel, drainWriters(c), c.parallel, c.parallel, c.parallel, d.runAtOnce)
	fmt.Fprintf(w, "jobstore enqueue, in batches (fsyncs shared): one writer makes a job's directory and two records (temp file, rename) with no fsync %.0f times a second: a batch's ceiling on this file system, whatever it shares\n",
		d.layout)
}

// drainWriters is how many jobs at once the loop of a drained job's fsyncs
// runs: as many as a Worker at c.parallel may write at once.
func drainWriters(c config) int { return 2 * c.parallel }

// printScaling says how each base system's drain grows from 1 to
// c.parallel at a time, and how jobstore's drain at c.parallel compares
// with floor's and with the disk's rate of a drained job's fsyncs alone.
func printScaling(w io.Writer, c config, r *results, rounds []diskRates) {
	bases, _ := r.split()
	if len(bases) == 0 {
		return
	}
	fmt.Fprintf(w, "\nDrain at %d against drain at 1 (each round's ratio, median and range):", c.parallel)
	for _, s := range bases {
		if v := s.perRound(rowDrainN, rowDrain1); len(v) > 0 {
			fmt.Fprintf(w, " %s %s×;", s.name, withRange(summary(v)))
		}
	}
	fmt.Fprintln(w)
	js := r.find("jobstore")
	if js == nil {
		return
	}
	n, _, _, ok := js.value(rowDrainN)
	if !ok {
		return
	}
	fmt.Fprintf(w, "jobstore drained %.0f jobs/s at %d", n, c.parallel)
	if f := r.find("floor"); f != nil {
		if fn, _, _, ok := f.value(rowDrainN); ok && fn > 0 {
			fmt.Fprintf(w, ", %.0f %% of floor's %.0f", 100*n/fn, fn)
		}
	}
	fmt.Fprintf(w, "; the disk made a drained job's fsyncs alone, %d jobs at once, %.0f times a second.\n",
		drainWriters(c), medianDisk(rounds).runAtOnce)
}
