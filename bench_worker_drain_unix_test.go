//go:build unix

package jobstore_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/require"
)

// writeQueuedJobs writes n queued jobs under root, each with its live index
// entry, without fsyncs (10,000 take a second).
func writeQueuedJobs(t testing.TB, root string, n int) {
	t.Helper()
	writeJobCopies(t, root, n, "q-", specAt("q-00000", 0), *statusIn(jobstore.Queued, 1), true)
}

// writeJobCopies writes n jobs under root named prefix and a number: the
// first with WriteSpec and WriteStatus of spec (given that job's ID) and
// st, the others as copies of its records under their own ID and an empty
// job.lock (as Submit lays a job out), without fsyncs; each with its live
// index entry if live, else none (as Finish leaves an ended job).
func writeJobCopies(t testing.TB, root string, n int, prefix string, spec jobstore.JobSpec, st jobstore.JobStatus, live bool) {
	t.Helper()
	require.NoError(t, os.MkdirAll(root, 0o755))
	id := func(i int) string { return fmt.Sprintf("%s%05d", prefix, i) }
	spec.ID = id(0)
	first, err := jobstore.DirFor(root, id(0))
	require.NoError(t, err)
	require.NoError(t, jobstore.WriteSpec(first, spec, jobstore.NoSync()))
	require.NoError(t, jobstore.WriteStatus(first, st, jobstore.NoSync()))
	require.NoError(t, os.WriteFile(first.LockPath(), nil, 0o644))
	if !live {
		require.NoError(t, os.Remove(filepath.Join(root, jobstore.LiveDir, id(0))))
	}
	specData, statusData := readFile(t, first.SpecPath()), readFile(t, first.StatusPath())
	require.NoError(t, inParallel(n-1, func(i int) error {
		name := id(i + 1)
		dir := filepath.Join(root, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			return err
		}
		// job.lock empty, as Submit makes it with the job.
		for file, data := range map[string][]byte{jobstore.SpecFile: specData, jobstore.StatusFile: statusData, jobstore.LockFile: nil} {
			if err := os.WriteFile(filepath.Join(dir, file), bytes.ReplaceAll(data, []byte(id(0)), []byte(name)), 0o644); err != nil {
				return err
			}
		}
		if !live {
			return nil
		}
		return os.Mkdir(filepath.Join(root, jobstore.LiveDir, name), 0o755)
	}))
}

// drainBacklog is how many no-op jobs each drain of BenchmarkWorkerDrain
// takes.
const drainBacklog = 400

// BenchmarkWorkerDrain drains a backlog of drainBacklog queued no-op jobs
// with a Worker (WithUntilIdle) at WithParallel(1) and WithParallel(8), in
// the same iteration, and reports each one's jobs/s, their ratio
// (p8/p1-ratio) and the CPU this process spent per job drained (getrusage:
// user + system, runtime and GC included) at each. A job's life is disk
// bound: Start and Finish fsync (4 fsyncs a job; BenchmarkWorkerDrainFloor
// measures them, and the other steps a job makes, bare).
//
//	go test -run '^$' -bench 'WorkerDrain' -benchtime 3x . | tee drain.txt
func BenchmarkWorkerDrain(b *testing.B) {
	var rate [2]float64
	var cpu [2]time.Duration
	parallel := [2]int{1, 8}
	for b.Loop() {
		for i, p := range parallel {
			b.StopTimer()
			root := filepath.Join(benchDir(b), "root")
			writeQueuedJobs(b, root, drainBacklog)
			b.StartTimer()
			c0, t0 := cpuTime(b), time.Now()
			n := drainWith(b, root, p)
			rate[i] += float64(n) / time.Since(t0).Seconds()
			cpu[i] += (cpuTime(b) - c0) / time.Duration(n)
		}
	}
	runs := float64(b.N)
	for i, p := range parallel {
		b.ReportMetric(rate[i]/runs, fmt.Sprintf("jobs/s-p%d", p))
		b.ReportMetric(float64(cpu[i].Microseconds())/runs, fmt.Sprintf("cpu-µs/job-p%d", p))
	}
	b.ReportMetric(rate[1]/rate[0], "p8/p1-ratio")
}

// drainWith runs a Worker of root at parallel until it is idle and returns
// the jobs it ran, all of which must have succeeded.
func drainWith(b *testing.B, root string, parallel int) int {
	b.Helper()
	var ran int64
	done := make(chan struct{}, drainBacklog)
	w, err := jobstore.NewWorker(root, func(context.Context, *jobstore.Run) error {
		done <- struct{}{}
		return nil
	}, jobstore.WithParallel(parallel), jobstore.WithUntilIdle())
	require.NoError(b, err)
	require.NoError(b, w.Run(context.Background()))
	ran = int64(len(done))
	require.EqualValues(b, drainBacklog, ran, "the worker ended before it drained the backlog")
	return int(ran)
}
