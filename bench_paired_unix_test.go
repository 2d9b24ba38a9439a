//go:build unix

package jobstore_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"golang.org/x/sys/unix"
)

// BenchmarkReadStatusPairedCPU is BenchmarkReadStatusPaired counted in the
// CPU time of the benchmark's own thread (user and system) instead of wall
// time: on a machine loaded by others, a reader descheduled mid-call adds
// wall time to whichever side it was in, not CPU time. Each side runs in
// batches of readBatch calls, in turn, the order swapped every batch.
func BenchmarkReadStatusPairedCPU(b *testing.B) {
	const readBatch = 32
	dir := benchJob(b, benchDir(b), "job")
	if err := jobstore.WriteStatus(dir, benchStatus(7)); err != nil {
		b.Fatal(err)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if threadCPU() < 0 {
		b.Skip("this system gives no thread CPU clock")
	}
	batch := func(read func() error) time.Duration {
		t0 := threadCPU()
		for range readBatch {
			if err := read(); err != nil {
				b.Fatal(err)
			}
		}
		return threadCPU() - t0
	}
	readJobstore := func() error { _, err := jobstore.ReadStatus(dir); return err }
	readByHand := func() error { return readStatusByHand(dir) }
	var base, js time.Duration
	n := 0
	for ; b.Loop(); n++ {
		if n%2 == 0 {
			base += batch(readByHand)
			js += batch(readJobstore)
		} else {
			js += batch(readJobstore)
			base += batch(readByHand)
		}
	}
	if n > 0 && base > 0 {
		b.ReportMetric(0, "ns/op")
		b.ReportMetric(float64(js)/float64(base), "jobstore/baseline-cpu")
		b.ReportMetric(float64(base)/float64(n*readBatch), "baseline-cpu-ns/call")
		b.ReportMetric(float64(js)/float64(n*readBatch), "jobstore-cpu-ns/call")
	}
}

// threadCPU is the CPU time (user and system) of the calling thread, or -1
// where the system cannot tell.
func threadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return -1
	}
	return time.Duration(ts.Nano())
}
