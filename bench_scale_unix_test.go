//go:build unix

package jobstore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/internal/dirstamp"
)

// The Scale benchmarks that count CPU time (getrusage: user + system of
// the whole process, runtime and GC included: an upper bound); see
// bench_scale_test.go.

// scaleLooks is how many submissions, each followed by a look, an op of
// BenchmarkScaleLookCPU's impl=startnext makes.
const scaleLooks = 10

// scaleSubmitWindow is how long BenchmarkScaleLookCPU's impl=worker
// counts the CPU of a waiting Worker after a submission, and as long
// again with none: long enough for every look the submission causes (a
// stamp is read again until a look a tick after it was first seen makes
// it clean).
const scaleSubmitWindow = dirstamp.CoarseTick + 2*time.Second

// scaleSubmitPairs is how many windows of each kind an op of
// BenchmarkScaleLookCPU's impl=worker counts.
const scaleSubmitPairs = 2

// BenchmarkScaleLookCPU: what a submission costs a waiting worker on a
// root of N finished jobs (jobs=1000, 10000, 50000).
//
// impl=startnext: a job of kind "k" is submitted, then StartNext (which
// takes only kind "absent", so it starts nothing) looks once (a done
// context), 10 times an op, in this process. Reported: the look's CPU
// (cpu-ms/look) and wall time (ms/look), its CPU per kept job
// (cpu-ns/job), and the CPU of the Submit before it (submit-cpu-ms), the
// floor a look is compared with.
//
// impl=worker: a Worker of this process (kind "absent") waits, with its
// file system watch and its 1 s scan; the CPU of the process over
// scaleSubmitWindow after a Submit, minus the same window with no
// submission, alternating, 2 pairs an op: everything one submission costs
// that Worker, every look it causes and the Submit included
// (cpu-ms/submit).
//
//	go test -run '^$' -bench 'ScaleLookCPU' -benchtime 1x -count 3 . | tee scale-look.txt
//	benchstat -col /jobs scale-look.txt
func BenchmarkScaleLookCPU(b *testing.B) {
	for _, n := range scaleSizes {
		b.Run(fmt.Sprintf("jobs=%d/impl=startnext", n), func(b *testing.B) {
			root := scaleRoot(b, n)
			v := openView(b, root)
			var ids []string
			defer func() { removeJobs(b, root, ids) }()
			look := func() {
				if r, err := v.StartNext(doneCtx(), jobstore.WithKinds("absent")); r != nil || !errors.Is(err, context.Canceled) {
					b.Fatal("started a job, or failed:", err)
				}
			}
			look() // the first look of a view reads every job
			var cpu, wall, submit time.Duration
			for b.Loop() {
				for range scaleLooks {
					c0 := cpuTime(b)
					dir, err := jobstore.Submit(root, jobstore.JobSpec{Kind: "k"})
					if err != nil {
						b.Fatal(err)
					}
					ids = append(ids, dir.ID())
					c1, w0 := cpuTime(b), time.Now()
					look()
					cpu, wall, submit = cpu+cpuTime(b)-c1, wall+time.Since(w0), submit+c1-c0
				}
			}
			looks := float64(b.N * scaleLooks)
			b.ReportMetric(float64(cpu.Microseconds())/1e3/looks, "cpu-ms/look")
			b.ReportMetric(float64(wall.Microseconds())/1e3/looks, "ms/look")
			b.ReportMetric(float64(cpu.Nanoseconds())/looks/float64(n), "cpu-ns/job")
			b.ReportMetric(float64(submit.Microseconds())/1e3/looks, "submit-cpu-ms")
		})
		b.Run(fmt.Sprintf("jobs=%d/impl=worker", n), func(b *testing.B) {
			root := scaleRoot(b, n)
			var ids []string
			defer func() { removeJobs(b, root, ids) }()
			stop := runIdleWorker(b, root, "absent", &ids)
			defer stop()
			var submitted, idle time.Duration
			for b.Loop() {
				for range scaleSubmitPairs {
					c0 := cpuTime(b)
					dir, err := jobstore.Submit(root, jobstore.JobSpec{Kind: "k"})
					if err != nil {
						b.Fatal(err)
					}
					ids = append(ids, dir.ID())
					time.Sleep(scaleSubmitWindow)
					c1 := cpuTime(b)
					time.Sleep(scaleSubmitWindow)
					submitted, idle = submitted+c1-c0, idle+cpuTime(b)-c1
				}
			}
			pairs := float64(b.N * scaleSubmitPairs)
			b.ReportMetric(float64((submitted-idle).Microseconds())/1e3/pairs, "cpu-ms/submit")
			b.ReportMetric(float64(idle.Microseconds())/1e3/pairs/scaleSubmitWindow.Seconds(), "idle-cpu-ms/s")
		})
	}
}

// runIdleWorker runs a Worker of root, taking kind, in this process until
// the returned stop is called, and returns once it has looked at the whole
// root and been left alone for a tick: it submits a probe job of kind
// (its ID appended to ids, for removal) and waits for the Worker to run
// it.
func runIdleWorker(b *testing.B, root, kind string, ids *[]string) (stop func()) {
	b.Helper()
	ran := make(chan struct{}, 1)
	w, err := jobstore.NewWorker(root, func(ctx context.Context, run *jobstore.Run) error {
		ran <- struct{}{}
		return nil
	}, jobstore.WithStartOptions(jobstore.WithKinds(kind)))
	if err != nil {
		b.Fatal(err)
	}
	dir, err := jobstore.Submit(root, jobstore.JobSpec{Kind: kind})
	if err != nil {
		b.Fatal(err)
	}
	*ids = append(*ids, dir.ID())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	stop = func() {
		cancel()
		if err := <-done; err != nil {
			b.Error(err)
		}
	}
	select {
	case <-ran:
	case <-time.After(scaleGuard):
		stop()
		b.Fatalf("the Worker did not run the probe job in %v", scaleGuard)
	}
	// The probe's stamps, and the root's, are young: a Worker left alone
	// is what is measured; the fixture's garbage is returned now, not by
	// the runtime's background work while measured.
	time.Sleep(dirstamp.CoarseTick + time.Second)
	debug.FreeOSMemory()
	return stop
}

// scaleIdleFor is how long BenchmarkScaleIdleCPU counts a waiting
// Worker's CPU.
const scaleIdleFor = 5 * time.Second

// BenchmarkScaleIdleCPU: the CPU of a Worker of this process that takes
// kind "other" (WithStartOptions(WithKinds("other")), `jobstore work
// --kind other`) waiting, with its file system watch, its 1 s scan and its
// rescue pass, for 5 s, in ms per second (10 ms/s is 1% of a core): on an
// empty root (root=empty, the baseline), on one of 20,000 queued jobs of
// kind "k" made by Submit (root=20000-queued-other), and on one of 50,000
// finished jobs (root=50000-finished).
//
//	go test -run '^$' -bench 'ScaleIdleCPU' -benchtime 1x -count 3 . | tee scale-idle.txt
func BenchmarkScaleIdleCPU(b *testing.B) {
	roots := []struct {
		name string
		root func(b *testing.B) string
	}{
		{"empty", benchDir},
		{fmt.Sprintf("%d-queued-other", scaleQueuedJobs), scaleQueuedRoot},
		{fmt.Sprintf("%d-finished", scaleSizes[len(scaleSizes)-1]), func(b *testing.B) string { return scaleRoot(b, scaleSizes[len(scaleSizes)-1]) }},
	}
	for _, r := range roots {
		b.Run("root="+r.name, func(b *testing.B) {
			root := r.root(b)
			var ids []string
			defer func() { removeJobs(b, root, ids) }()
			stop := runIdleWorker(b, root, "other", &ids)
			defer stop()
			var cpu, wall time.Duration
			for b.Loop() {
				c0, w0 := cpuTime(b), time.Now()
				time.Sleep(scaleIdleFor)
				cpu, wall = cpu+cpuTime(b)-c0, wall+time.Since(w0)
			}
			b.ReportMetric(float64(cpu.Microseconds())/1e3/wall.Seconds(), "cpu-ms/s")
		})
	}
}

// scaleQueuedJobs is the number of queued jobs of scaleQueuedRoot, of a
// kind the idle worker does not take.
const scaleQueuedJobs = 20_000

// scaleQueuedRoot is a root of 20,000 queued jobs of kind "k", made by
// Submit (so that whatever Submit adds for a queued job is there), built
// on first use and shared.
func scaleQueuedRoot(b *testing.B) string {
	b.Helper()
	scaleFixtures.mu.Lock()
	defer scaleFixtures.mu.Unlock()
	if scaleFixtures.queued != "" {
		return scaleFixtures.queued
	}
	root := filepath.Join(scaleFixtureDir(b), "queued-"+strconv.Itoa(scaleQueuedJobs))
	if err := os.Mkdir(root, 0o755); err != nil {
		b.Fatal(err)
	}
	t0 := time.Now()
	err := inParallel(scaleQueuedJobs, func(i int) error {
		_, err := jobstore.Submit(root, jobstore.JobSpec{ID: fmt.Sprintf("queued-%05d", i), Kind: "k"})
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("submitted %d queued jobs in %v", scaleQueuedJobs, time.Since(t0).Round(time.Millisecond))
	time.Sleep(dirstamp.CoarseTick + time.Second)
	scaleFixtures.queued = root
	return root
}
