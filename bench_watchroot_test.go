package jobstore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/axqua/jobstore"
)

// Benchmarks of WatchRoot, each against its baseline in the same run (the
// figures and commands are in docs/benchmarks.md):
//
//	go test -run '^$' -bench 'WatchRoot' -benchtime 1x -count 3 . | tee watchroot.txt
//
// Each reports its ratio as a metric; absolute times swing with the load.

// benchRoot makes a root of n jobs (running, with progress, params and a
// message), on the repository's disk: BenchmarkList's and WatchRoot's.
func benchRoot(b *testing.B, n int) string {
	b.Helper()
	root := benchDir(b)
	start := time.Now()
	for i := range n {
		p := float64(i%100) / 100
		st := &jobstore.JobStatus{State: jobstore.Running, Seq: uint64(i + 2), Progress: &p, Message: "step " + strconv.Itoa(i),
			UpdatedAt: jobstore.Now(), StartedAt: &start, PID: 4242, Host: "bench-host"}
		spec := specAt(fmt.Sprintf("job-%05d", i), i)
		spec.Params = json.RawMessage(`{"input": "/data/in.csv", "threads": 4}`)
		writeJob(b, root, spec, st)
	}
	return root
}

// settleTime is what a benchmark of WatchRoot's steady state waits first:
// right after Synced a WatchRoot watches the jobs and reads again those
// written recently (all of a fresh fixture).
const settleTime = 3 * time.Second

// untilSynced starts WatchRoot on root and receives up to Synced; the
// returned stop cancels it and waits for its channel to close.
func untilSynced(b *testing.B, root string, opts ...jobstore.WatchOption) (ch <-chan jobstore.RootUpdate, stop func()) {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ch, err := jobstore.WatchRoot(ctx, root, opts...)
	if err != nil {
		b.Fatal(err)
	}
	for u := range ch {
		if u.Synced {
			break
		}
	}
	return ch, func() {
		cancel()
		for range ch {
		}
	}
}

// BenchmarkWatchRootFirstSynced: 10,000 jobs, List's time against the time
// from calling WatchRoot to receiving Synced (every job's first update
// received), in pairs, alternating which goes first. Metrics: the median
// of the pairs' ratios ("synced/list", the figure that counts on a machine
// whose load changes between pairs) and the mean times.
func BenchmarkWatchRootFirstSynced(b *testing.B) {
	root := benchRoot(b, benchListJobs)
	var list, synced time.Duration
	var ratios []float64
	for i := 0; b.Loop(); i++ {
		var pair [2]time.Duration
		for k := range 2 {
			if (i+k)%2 == 0 {
				t0 := time.Now()
				entries, err := jobstore.List(root)
				pair[0] = time.Since(t0)
				if err != nil || len(entries) != benchListJobs {
					b.Fatal(err, len(entries))
				}
			} else {
				t0 := time.Now()
				ctx, cancel := context.WithCancel(context.Background())
				ch, err := jobstore.WatchRoot(ctx, root)
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				for u := range ch {
					if u.Synced {
						break
					}
					n++
				}
				pair[1] = time.Since(t0)
				cancel()
				for range ch {
				}
				if n != benchListJobs {
					b.Fatal(n)
				}
			}
		}
		list, synced = list+pair[0], synced+pair[1]
		ratios = append(ratios, float64(pair[1])/float64(pair[0]))
	}
	slices.Sort(ratios)
	b.ReportMetric(float64(list.Milliseconds())/float64(b.N), "list-ms/op")
	b.ReportMetric(float64(synced.Milliseconds())/float64(b.N), "synced-ms/op")
	b.ReportMetric(ratios[len(ratios)/2], "synced/list")
}

// BenchmarkWatchRootChangeLatency: from the start of a WriteStatus
// (NoSync) of one of 10,000 jobs to a WatchRoot consumer receiving it, by
// events, against the same for a Watch of one job, alternating, 200
// samples each per op. Metrics: p50 and p99 of each, "p99/watch".
func BenchmarkWatchRootChangeLatency(b *testing.B) {
	root := benchRoot(b, benchListJobs)
	other := benchRoot(b, 1)
	rootCh, stop := untilSynced(b, root, jobstore.WithPollInterval(time.Hour))
	defer stop()
	time.Sleep(settleTime)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	single := jobstore.JobDir(other + "/job-00000")
	watchCh, err := jobstore.Watch(ctx, single, jobstore.WithPollInterval(time.Hour))
	if err != nil {
		b.Fatal(err)
	}
	<-watchCh
	var viaRoot, viaWatch []time.Duration
	seq := uint64(1_000_000)
	for b.Loop() {
		for i := range 400 {
			seq++
			st := *statusIn(jobstore.Running, seq)
			if i%2 == 0 {
				dir := jobstore.JobDir(fmt.Sprintf("%s/job-%05d", root, (i*7919)%benchListJobs))
				t0 := time.Now()
				if err := jobstore.WriteStatus(dir, st, jobstore.NoSync()); err != nil {
					b.Fatal(err)
				}
				for u := range rootCh {
					if u.Dir == dir && u.Status != nil && u.Status.Seq == seq {
						break
					}
				}
				viaRoot = append(viaRoot, time.Since(t0))
			} else {
				t0 := time.Now()
				if err := jobstore.WriteStatus(single, st, jobstore.NoSync()); err != nil {
					b.Fatal(err)
				}
				for u := range watchCh {
					if u.Status != nil && u.Status.Seq == seq {
						break
					}
				}
				viaWatch = append(viaWatch, time.Since(t0))
			}
		}
	}
	p := func(d []time.Duration, q float64) float64 {
		slices.Sort(d)
		return float64(d[int(q*float64(len(d)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(p(viaRoot, 0.5), "root-p50-ms")
	b.ReportMetric(p(viaRoot, 0.99), "root-p99-ms")
	b.ReportMetric(p(viaWatch, 0.5), "watch-p50-ms")
	b.ReportMetric(p(viaWatch, 0.99), "watch-p99-ms")
	b.ReportMetric(p(viaRoot, 0.99)/p(viaWatch, 0.99), "p99/watch")
}

// BenchmarkWatchRootMemoryPerJob: the heap a WatchRoot of 10,000 jobs
// holds after Synced (all records read, every job watched), against the
// heap of List's result for the same root (the records themselves), both
// after a GC. Metrics: bytes per job of each, and "beyond-records-B/job",
// their difference.
func BenchmarkWatchRootMemoryPerJob(b *testing.B) {
	root := benchRoot(b, benchListJobs)
	heap := func() uint64 {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	var list, watch float64
	for b.Loop() {
		h0 := heap()
		entries, err := jobstore.List(root)
		if err != nil {
			b.Fatal(err)
		}
		list += float64(heap()-h0) / benchListJobs
		runtime.KeepAlive(entries)
		entries = nil

		h0 = heap()
		_, stop := untilSynced(b, root)
		time.Sleep(settleTime) // every job watched
		watch += float64(heap()-h0) / benchListJobs
		stop()
	}
	n := float64(b.N)
	b.ReportMetric(list/n, "list-B/job")
	b.ReportMetric(watch/n, "watchroot-B/job")
	b.ReportMetric((watch-list)/n, "beyond-records-B/job")
}
