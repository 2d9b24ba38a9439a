package jobstore_test

import (
	"strconv"
	"testing"

	"github.com/axqua/jobstore"
)

// BenchmarkLifecycle is one job's life as a runner lives it: Start (the
// lock, the reads, the claim, the running record), ten Progress calls and a
// Flush, Finish and Close, on the repo's disk. docs/benchmarks.md compares
// it between two builds in one run (what ownership across hosts costs a
// single host).
func BenchmarkLifecycle(b *testing.B) {
	root := benchDir(b)
	dirs := make([]jobstore.JobDir, b.N)
	for i := range dirs {
		dir, err := jobstore.Submit(root, jobstore.JobSpec{ID: "life-" + strconv.Itoa(i), Kind: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		dirs[i] = dir
	}
	b.ResetTimer()
	for _, dir := range dirs {
		lifecycle(b, dir)
	}
}

// lifecycle lives one job's life: Start, ten Progress calls (coalesced),
// Flush, Finish and Close.
func lifecycle(b *testing.B, dir jobstore.JobDir) {
	run, err := jobstore.Start(dir)
	if err != nil {
		b.Fatal(err)
	}
	for p := 1; p <= 10; p++ {
		if err := run.Progress(float64(p)/10, "step "+strconv.Itoa(p)); err != nil {
			b.Fatal(err)
		}
	}
	if err := run.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := run.Finish(jobstore.Outcome{State: jobstore.Succeeded}); err != nil {
		b.Fatal(err)
	}
	if err := run.Close(); err != nil {
		b.Fatal(err)
	}
}
