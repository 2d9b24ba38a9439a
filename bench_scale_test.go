package jobstore_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/internal/dirstamp"
)

// The Scale benchmarks: what a worker pays on a root that keeps a long
// history, at 1,000, 10,000 and 50,000 finished jobs, each size a
// sub-benchmark (jobs=N) of one run, so that the ratios between sizes are
// taken under one load (the figures are in docs/benchmarks.md):
//
//	go test -run '^$' -bench 'Scale' -benchtime 1x -count 3 . | tee scale.txt
//	benchstat -col /jobs scale.txt
//
// Every one uses the public API (and RescuePass, the Worker's rescue pass
// exported to tests), so that it measures whatever layout the root has.
// The roots of finished jobs are built once per process (scaleRoot) and
// shared: each benchmark removes the jobs it adds.

// scaleSizes are the numbers of finished jobs the Scale benchmarks' roots
// keep.
var scaleSizes = [...]int{1_000, 10_000, 50_000}

// scaleFixtures are the roots of finished jobs the Scale benchmarks share,
// built once per process in one directory beside the sources (the repo's
// disk, never a tmpfs), which TestMain removes (removeScaleFixtures).
var scaleFixtures struct {
	mu     sync.Mutex
	dir    string
	roots  map[int]string
	queued string // scaleQueuedRoot's
}

// scaleFixtureDir is the directory of the shared fixtures, made on first
// use; the caller holds scaleFixtures.mu.
func scaleFixtureDir(tb testing.TB) string {
	tb.Helper()
	if scaleFixtures.dir == "" {
		dir, err := os.MkdirTemp(".", ".bench-scale-")
		if err != nil {
			tb.Fatal(err)
		}
		abs, err := filepath.Abs(dir)
		if err != nil {
			tb.Fatal(err)
		}
		scaleFixtures.dir = abs
	}
	return scaleFixtures.dir
}

// removeScaleFixtures removes the shared fixtures, once every benchmark
// has run.
func removeScaleFixtures() {
	scaleFixtures.mu.Lock()
	defer scaleFixtures.mu.Unlock()
	if scaleFixtures.dir != "" {
		_ = os.RemoveAll(scaleFixtures.dir)
		scaleFixtures.dir, scaleFixtures.roots, scaleFixtures.queued = "", nil, ""
	}
}

// scaleRoot is a root of n finished jobs (finishedJob), built on first use
// and then shared by every benchmark of the process; the caller must leave
// it as it found it (removeJobs). It is left alone for a tick
// (dirstamp.CoarseTick) after it is built, as a root kept for its history
// is.
func scaleRoot(b *testing.B, n int) string {
	b.Helper()
	scaleFixtures.mu.Lock()
	defer scaleFixtures.mu.Unlock()
	if root, ok := scaleFixtures.roots[n]; ok {
		return root
	}
	root := filepath.Join(scaleFixtureDir(b), "jobs-"+strconv.Itoa(n))
	t0 := time.Now()
	if err := writeFinishedJobs(root, 0, n); err != nil {
		b.Fatal(err)
	}
	b.Logf("built a root of %d finished jobs in %v", n, time.Since(t0).Round(time.Millisecond))
	time.Sleep(dirstamp.CoarseTick + time.Second)
	if scaleFixtures.roots == nil {
		scaleFixtures.roots = map[int]string{}
	}
	scaleFixtures.roots[n] = root
	return root
}

// fixtureWriters is how many goroutines write a fixture: Submit's fsyncs
// overlap, and a FUSE mount's round trips.
const fixtureWriters = 32

// inParallel calls f(i) for every i in [0, n) from fixtureWriters
// goroutines, and returns the first error.
func inParallel(n int, f func(i int) error) error {
	var wg sync.WaitGroup
	errs := make([]error, fixtureWriters)
	for g := range fixtureWriters {
		wg.Go(func() {
			for i := g; i < n; i += fixtureWriters {
				if err := f(i); err != nil {
					errs[g] = err
					return
				}
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// finishedJob is the i-th job of a root kept for its history: kind "k",
// submitted at base + i s, ran 30 s, ended succeeded (every tenth failed,
// exit code 1), seq 3, attempt 1.
func finishedJob(i int) (jobstore.JobSpec, jobstore.JobStatus) {
	id := fmt.Sprintf("job-%05d", i)
	spec := specAt(id, i)
	spec.Kind = "k"
	started := spec.SubmittedAt.Add(time.Second)
	ended := started.Add(30 * time.Second)
	done, code := 1.0, 0
	st := jobstore.JobStatus{State: jobstore.Succeeded, Seq: 3, Progress: &done, Message: "done", UpdatedAt: ended,
		StartedAt: &started, FinishedAt: &ended, PID: 4242, Host: "bench-host", Attempt: 1, ExitCode: &code}
	if i%10 == 9 {
		code = 1
		st.State, st.Message, st.Error = jobstore.Failed, "step 2 of 3", "exit status 1"
	}
	return spec, st
}

// writeFinishedJobs writes jobs [from, to) of finishedJob under root (made
// if missing) with WriteSpec and WriteStatus, without fsyncs: the records
// are what the package writes today, and a fixture of 50,000 takes
// seconds.
func writeFinishedJobs(root string, from, to int) error {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	return inParallel(to-from, func(i int) error {
		spec, st := finishedJob(from + i)
		dir, err := jobstore.DirFor(root, spec.ID)
		if err != nil {
			return err
		}
		if err := jobstore.WriteSpec(dir, spec, jobstore.NoSync()); err != nil {
			return err
		}
		if err := jobstore.WriteStatus(dir, st, jobstore.NoSync()); err != nil {
			return err
		}
		// The job ended long ago: the look that saw it end took it out of
		// the live index, as in a root kept for its history.
		err = os.Remove(filepath.Join(root, jobstore.LiveDir, spec.ID))
		if errors.Is(err, fs.ErrNotExist) {
			err = nil
		}
		return err
	})
}

// removeJobs removes the jobs of ids under root, so that a shared fixture
// is left as it was found: those still queued are cancelled first (none
// may be running).
func removeJobs(tb testing.TB, root string, ids []string) {
	tb.Helper()
	for _, id := range ids {
		dir, err := jobstore.DirFor(root, id)
		if err != nil {
			tb.Error(err)
			continue
		}
		if st, err := jobstore.ReadStatus(dir); err == nil && st != nil && !st.State.Terminal() {
			err = jobstore.RequestCancel(dir, jobstore.CancelRequest{Reason: "a benchmark's job, removed"})
			if err != nil {
				tb.Errorf("cannot cancel %s in the shared fixture: %v", id, err)
			}
		}
		err = jobstore.Remove(dir)
		if err != nil && !errors.Is(err, jobstore.ErrNotJob) {
			tb.Errorf("cannot remove %s from the shared fixture: %v", id, err)
		}
	}
}

// scaleLatencySamples is how many submissions each latency op times.
const scaleLatencySamples = 100

// BenchmarkScaleStartLatency: a worker process waits on this host on a
// root of N finished jobs (jobs=1000, 10000, 50000); the benchmark submits
// 100 jobs one at a time, each once the worker is waiting again, and
// measures from Submit's return to the start of the job's work in the
// worker (one host, one clock): StartNext's return in a loop
// (impl=startnext, latencyWorkerRole) and a Worker's handler beginning
// (impl=worker, workerLatencyRole). A first submission, not timed, lets
// the worker read the root. Reported: p50, p99 and max in ms; what counts
// is how they grow with N, within the run.
//
//	go test -run '^$' -bench 'ScaleStartLatency' -benchtime 1x -count 3 . | tee scale-latency.txt
//	benchstat -col /jobs scale-latency.txt
func BenchmarkScaleStartLatency(b *testing.B) {
	for _, n := range scaleSizes {
		for _, impl := range []string{"startnext", "worker"} {
			b.Run(fmt.Sprintf("jobs=%d/impl=%s", n, impl), func(b *testing.B) {
				root := scaleRoot(b, n)
				role := latencyWorkerRole
				if impl == "worker" {
					role = workerLatencyRole
				}
				for b.Loop() {
					lat := scaleLatencies(b, startRole(b, role, "ROOT="+root), root, scaleLatencySamples)
					reportLatencies(b, lat)
				}
			})
		}
	}
}

// scaleGuard bounds how long a Scale benchmark waits for a worker to say
// something: a worker's first look at 50,000 jobs through a FUSE mount
// takes seconds. It is no latency limit.
const scaleGuard = 5 * time.Minute

// scaleLatencies is startLatencies for a shared root: the submissions go
// through submitRoot (IDs chosen by Submit), a first one is not timed (the
// worker reads the root then), and every job submitted is removed at the
// end, once the worker has stopped. It returns the n latencies, sorted.
func scaleLatencies(tb testing.TB, k *child, submitRoot string, n int) []time.Duration {
	tb.Helper()
	lines := make(chan string, 2*n+8) // never blocks: the reader ends with the worker
	go func() {
		defer close(lines)
		for {
			line, err := k.out.ReadString('\n')
			if err != nil {
				return
			}
			lines <- strings.TrimSpace(line)
		}
	}()
	read := func() string {
		select {
		case line, ok := <-lines:
			if !ok {
				tb.Fatal("the worker ended")
			}
			return line
		case <-time.After(scaleGuard):
			tb.Fatalf("the worker said nothing for %v", scaleGuard)
		}
		return ""
	}
	var ids []string
	defer func() {
		fmt.Fprintln(k.stdin, "stop")
		_ = k.cmd.Wait()
		removeJobs(tb, submitRoot, ids)
	}()
	lat := make([]time.Duration, 0, n)
	for i := range n + 1 {
		if line := read(); line != "ready" {
			tb.Fatalf("worker said %q, want ready", line)
		}
		time.Sleep(10 * time.Millisecond) // the worker is idle by now
		dir, err := jobstore.Submit(submitRoot, jobstore.JobSpec{Kind: "k"})
		if err != nil {
			tb.Fatal(err)
		}
		submitted := time.Now()
		ids = append(ids, dir.ID())
		f := strings.Fields(read())
		if len(f) != 3 || f[0] != "started" || f[1] != dir.ID() {
			tb.Fatalf("worker said %q, want the start of %s", f, dir.ID())
		}
		ns, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			tb.Fatal(err)
		}
		if i > 0 {
			lat = append(lat, time.Unix(0, ns).Sub(submitted))
		}
	}
	slices.Sort(lat)
	return lat
}

// scaleRescuePasses is how many rescue passes each op of
// BenchmarkScaleRescuePass makes.
const scaleRescuePasses = 200

// BenchmarkScaleRescuePass: the rescue pass of a Worker (what it does each
// scan interval to rescue jobs: the running jobs its view knows brought up
// to date, then each runner judged; RescuePass), on a root of N finished
// jobs (jobs=1000, 10000, 50000) in which 8 more run (submitted and
// started by this process, alive, so none is taken over), left alone
// between passes. Reported: the mean time of a pass, in µs, over 200 passes
// an op; a pass should cost what the running jobs cost, not what the root
// keeps.
//
//	go test -run '^$' -bench 'ScaleRescuePass' -benchtime 1x -count 3 . | tee scale-rescue.txt
func BenchmarkScaleRescuePass(b *testing.B) {
	for _, n := range scaleSizes {
		b.Run(fmt.Sprintf("jobs=%d", n), func(b *testing.B) {
			root := scaleRoot(b, n)
			var ids []string
			b.Cleanup(func() { removeJobs(b, root, ids) }) // last: cleanups run last first
			for range rescueRunning {
				dir, err := jobstore.Submit(root, jobstore.JobSpec{Kind: "k"})
				if err != nil {
					b.Fatal(err)
				}
				ids = append(ids, dir.ID())
				r, err := jobstore.Start(dir)
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() {
					if err := r.Finish(jobstore.Outcome{State: jobstore.Succeeded}); err != nil {
						b.Error(err)
					}
					_ = r.Close()
				})
			}
			pass, closePass, err := jobstore.RescuePass(root)
			if err != nil {
				b.Fatal(err)
			}
			defer closePass()
			// The running jobs' stamps are young; a root left alone is
			// what is measured.
			time.Sleep(dirstamp.CoarseTick + time.Second)
			if got := pass(); got != rescueRunning {
				b.Fatalf("judged %d running jobs of %d, want %d", got, n, rescueRunning)
			}
			var spent time.Duration
			for b.Loop() {
				t0 := time.Now()
				for range scaleRescuePasses {
					pass()
				}
				spent += time.Since(t0)
			}
			b.ReportMetric(float64(spent.Nanoseconds())/1e3/float64(b.N*scaleRescuePasses), "µs/pass")
		})
	}
}

// liveHeap is the heap in use after two collections.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkScaleMemoryPerJob: the heap a view of a root of N finished jobs
// holds (jobs=1000, 10000, 50000), per job: the live heap after two
// collections with the view held, minus the same before it was made,
// divided by N. worker-B/job: a Worker that has looked at the root and
// runs a job of it (a probe job of its kind, submitted first; the heap is
// read while its handler waits); startnext-B/job: a View after one
// StartNext look (made and closed each op); watchroot-B/job: a WatchRoot that
// has delivered Synced and watched every job for settleTime; list-B/job:
// List's result, the records themselves, for comparison.
//
//	go test -run '^$' -bench 'ScaleMemoryPerJob' -benchtime 1x -count 3 . | tee scale-memory.txt
func BenchmarkScaleMemoryPerJob(b *testing.B) {
	for _, n := range scaleSizes {
		b.Run(fmt.Sprintf("jobs=%d", n), func(b *testing.B) {
			root := scaleRoot(b, n)
			perJob := func(h0, h1 uint64) float64 { return (float64(h1) - float64(h0)) / float64(n) }
			var worker, next, watch, list float64
			for b.Loop() {
				worker += workerViewBytes(b, root, perJob)

				h0 := liveHeap()
				v, err := jobstore.OpenView(root)
				if err != nil {
					b.Fatal(err)
				}
				if r, err := v.StartNext(doneCtx(), jobstore.WithKinds("absent")); r != nil || !errors.Is(err, context.Canceled) {
					b.Fatal("started a job, or failed:", err)
				}
				next += perJob(h0, liveHeap())
				if err := v.Close(); err != nil {
					b.Fatal(err)
				}

				h0 = liveHeap()
				_, stop := untilSynced(b, root)
				time.Sleep(settleTime) // every job watched
				watch += perJob(h0, liveHeap())
				stop()

				h0 = liveHeap()
				entries, err := jobstore.List(root)
				if err != nil || len(entries) != n {
					b.Fatal(len(entries), err)
				}
				list += perJob(h0, liveHeap())
				runtime.KeepAlive(entries)
			}
			k := float64(b.N)
			b.ReportMetric(worker/k, "worker-B/job")
			b.ReportMetric(next/k, "startnext-B/job")
			b.ReportMetric(watch/k, "watchroot-B/job")
			b.ReportMetric(list/k, "list-B/job")
		})
	}
}

// workerViewBytes runs a Worker of root that takes kind "probe" until its
// handler runs the probe job submitted for it, reads the live heap then
// (the Worker has looked at the whole root), and returns perJob of the
// heap before NewWorker and that one. The probe job is removed after.
func workerViewBytes(b *testing.B, root string, perJob func(h0, h1 uint64) float64) float64 {
	b.Helper()
	dir, err := jobstore.Submit(root, jobstore.JobSpec{Kind: "probe"})
	if err != nil {
		b.Fatal(err)
	}
	defer removeJobs(b, root, []string{dir.ID()})
	h0 := liveHeap()
	running, measured := make(chan struct{}), make(chan struct{})
	w, err := jobstore.NewWorker(root, func(ctx context.Context, run *jobstore.Run) error {
		close(running)
		<-measured
		return nil
	}, jobstore.WithStartOptions(jobstore.WithKinds("probe")))
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	select {
	case <-running:
	case <-time.After(scaleGuard):
		b.Fatalf("the Worker did not start the probe job in %v", scaleGuard)
	}
	h1 := liveHeap()
	close(measured)
	cancel()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	if st, err := jobstore.ReadStatus(dir); err != nil || st.State != jobstore.Succeeded {
		b.Fatalf("the probe job did not succeed: %+v, %v", st, err)
	}
	return perJob(h0, h1)
}
