package jobstore_test

import (
	"encoding/json"
	"os"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/axqua/jobstore"
)

// Paired benchmarks: on a machine whose disk and CPUs others share, two
// sub-benchmarks run one after the other see different loads. These run
// jobstore and its baseline in turn within each iteration (the order
// swapped every iteration), time each call, and report the ratio of the
// two sums, jobstore/baseline, beside each one's time per call:
//
//	go test -run '^$' -bench 'Paired' -count 10 . | tee paired.txt
//	benchstat paired.txt

// writeStatusByHand is the bare protocol's write of the status seq: encode
// as WriteStatus does (stamped, indented), then writeByHand.
func writeStatusByHand(dir jobstore.JobDir, seq int) error {
	st := benchStatus(seq)
	st.SchemaVersion, st.JobID, st.UpdatedAt = jobstore.StatusSchemaVersion, dir.ID(), jobstore.Now()
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return writeByHand(dir.StatusPath(), append(data, '\n'))
}

// readStatusByHand is ReadStatus's baseline: os.ReadFile and json.Unmarshal.
func readStatusByHand(dir jobstore.JobDir) error {
	data, err := os.ReadFile(dir.StatusPath())
	if err != nil {
		return err
	}
	var st jobstore.JobStatus
	return json.Unmarshal(data, &st)
}

// pairTimes sums the time of each side of a paired benchmark, and with
// cpu (one goroutine, locked to its thread) the CPU time of its thread.
type pairTimes struct {
	baseline, jobstore       atomic.Int64
	cpu                      bool
	baselineCPU, jobstoreCPU time.Duration
}

// run times baseline and jobstore in turn, the order swapped with i.
func (p *pairTimes) run(i int, baseline, jobstore func() error) error {
	sides := [2]struct {
		f   func() error
		sum *atomic.Int64
		cpu *time.Duration
	}{{baseline, &p.baseline, &p.baselineCPU}, {jobstore, &p.jobstore, &p.jobstoreCPU}}
	if i%2 == 1 {
		sides[0], sides[1] = sides[1], sides[0]
	}
	for _, s := range sides {
		var c0 time.Duration
		if p.cpu {
			c0 = threadCPU()
		}
		t0 := time.Now()
		if err := s.f(); err != nil {
			return err
		}
		s.sum.Add(int64(time.Since(t0)))
		if p.cpu {
			*s.cpu += threadCPU() - c0
		}
	}
	return nil
}

// report gives the ratio and each side's time per call (n calls a side).
func (p *pairTimes) report(b *testing.B, n int) {
	base, js := float64(p.baseline.Load()), float64(p.jobstore.Load())
	if base == 0 || n == 0 {
		return
	}
	b.ReportMetric(0, "ns/op") // the pair's time means nothing by itself
	b.ReportMetric(js/base, "jobstore/baseline")
	b.ReportMetric(base/float64(n), "baseline-ns/call")
	b.ReportMetric(js/float64(n), "jobstore-ns/call")
	if p.cpu && p.baselineCPU > 0 {
		b.ReportMetric(float64(p.baselineCPU)/float64(n), "baseline-cpu-ns/call")
		b.ReportMetric(float64(p.jobstoreCPU)/float64(n), "jobstore-cpu-ns/call")
	}
}

// BenchmarkWriteStatusPaired: one writer, WriteStatus (durable) against the
// bare protocol, each on a job of its own; beside the wall times, each
// side's CPU time (its thread's, where the system can tell: what the side
// computes and asks of the kernel, without the waits for the disk).
func BenchmarkWriteStatusPaired(b *testing.B) {
	root := benchDir(b)
	base, js := benchJob(b, root, "base"), benchJob(b, root, "job")
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	p := pairTimes{cpu: threadCPU() >= 0}
	n := 0
	for ; b.Loop(); n++ {
		if err := p.run(n, func() error { return writeStatusByHand(base, n) },
			func() error { return jobstore.WriteStatus(js, benchStatus(n)) }); err != nil {
			b.Fatal(err)
		}
	}
	p.report(b, n)
}

// BenchmarkWriteStatusManyJobsPaired: 64 goroutines at once (at least: a
// multiple of GOMAXPROCS), each writing two jobs of its own in turn, one by
// WriteStatus and one by the bare protocol; the disk and the CPUs are
// shared by both sides all along. The ratio of the summed times is the
// inverse of the ratio of the two sides' throughputs.
func BenchmarkWriteStatusManyJobsPaired(b *testing.B) {
	const writers = 64
	perProc := (writers + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0)
	root := benchDir(b)
	type pair struct{ base, js jobstore.JobDir }
	pairs := make([]pair, perProc*runtime.GOMAXPROCS(0))
	for i := range pairs {
		pairs[i] = pair{benchJob(b, root, "base"+strconv.Itoa(i)), benchJob(b, root, "job"+strconv.Itoa(i))}
	}
	var p pairTimes
	var next, calls atomic.Int64
	b.SetParallelism(perProc)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		my := pairs[next.Add(1)-1] // two jobs per goroutine
		for i := 0; pb.Next(); i++ {
			if err := p.run(i, func() error { return writeStatusByHand(my.base, i) },
				func() error { return jobstore.WriteStatus(my.js, benchStatus(i)) }); err != nil {
				b.Error(err)
				return
			}
			calls.Add(1)
		}
	})
	p.report(b, int(calls.Load()))
}

// BenchmarkReadStatusPaired: ReadStatus against os.ReadFile and
// json.Unmarshal of the same status.json.
func BenchmarkReadStatusPaired(b *testing.B) {
	dir := benchJob(b, benchDir(b), "job")
	if err := jobstore.WriteStatus(dir, benchStatus(7)); err != nil {
		b.Fatal(err)
	}
	var p pairTimes
	n := 0
	for ; b.Loop(); n++ {
		if err := p.run(n, func() error { return readStatusByHand(dir) }, func() error {
			st, err := jobstore.ReadStatus(dir)
			if err == nil && st == nil {
				b.Fatal("no status")
			}
			return err
		}); err != nil {
			b.Fatal(err)
		}
	}
	p.report(b, n)
}
