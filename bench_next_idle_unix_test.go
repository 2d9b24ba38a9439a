//go:build unix

package jobstore_test

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/internal/dirstamp"
)

// benchIdleJobs is the number of queued jobs of another kind on the root
// that BenchmarkStartNextIdleCPU's worker waits on.
const benchIdleJobs = 20_000

// BenchmarkStartNextIdleCPU measures what an idle worker costs: StartNext
// with WithKinds("k") on a root of 20,000 queued jobs of another kind
// (root=20000-other), against the same on an empty root (root=empty, the
// baseline), in the same run. Two figures, from getrusage (user + system
// CPU of the whole process, runtime and GC included: an upper bound):
// look, cpu-µs/look, is one look with root unchanged (StartNext with a done
// context; 20 looks per iteration), what each scan of a waiting StartNext
// costs; wait, cpu-ms/s, is a StartNext left waiting for idleFor with its
// default 1 s scan and its file system watch, per second of waiting.
//
//	go test -run '^$' -bench 'StartNextIdleCPU' -benchtime 1x -count 3 . | tee idle-next.txt
func BenchmarkStartNextIdleCPU(b *testing.B) {
	const (
		looksPerIteration = 20
		idleFor           = 5 * time.Second
	)
	busy := benchDir(b)
	for i := range benchIdleJobs {
		spec := specAt(fmt.Sprintf("job-%05d", i), i)
		spec.Kind = "other"
		writeJob(b, busy, spec, statusIn(jobstore.Queued, 1))
	}
	empty := benchDir(b)
	// A view reads a stamp again at every look until a look a tick after
	// it first saw it (cleanStamp); a root that has been left alone, and
	// a view whose stamps are clean, are what is measured.
	time.Sleep(dirstamp.CoarseTick + time.Second)
	views := map[string]*jobstore.View{busy: openView(b, busy), empty: openView(b, empty)}
	look := func(b *testing.B, root string) {
		r, err := views[root].StartNext(doneCtx(), jobstore.WithKinds("k"))
		if r != nil || !errors.Is(err, context.Canceled) {
			b.Fatal("started a job, or failed:", err)
		}
	}
	for _, root := range []struct{ name, path string }{{"empty", empty}, {fmt.Sprintf("%d-other", benchIdleJobs), busy}} {
		b.Run("root="+root.name+"/look", func(b *testing.B) {
			look(b, root.path) // the first look reads every job: the view is kept
			time.Sleep(dirstamp.CoarseTick)
			look(b, root.path) // a tick later, the read that makes their stamps clean
			var cpu time.Duration
			for b.Loop() {
				c0 := cpuTime(b)
				for range looksPerIteration {
					look(b, root.path)
				}
				cpu += cpuTime(b) - c0
			}
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N*looksPerIteration), "cpu-µs/look")
		})
		b.Run("root="+root.name+"/wait", func(b *testing.B) {
			look(b, root.path)
			// The fixture's garbage is collected and its memory returned
			// now, not by the runtime's background work while measured.
			debug.FreeOSMemory()
			var cpu, wall time.Duration
			for b.Loop() {
				ctx, cancel := context.WithTimeout(context.Background(), idleFor)
				c0, w0 := cpuTime(b), time.Now()
				r, err := views[root.path].StartNext(ctx, jobstore.WithKinds("k"))
				cpu, wall = cpu+cpuTime(b)-c0, wall+time.Since(w0)
				cancel()
				if r != nil || !errors.Is(err, context.DeadlineExceeded) {
					b.Fatal("started a job, or failed:", err)
				}
			}
			b.ReportMetric(float64(cpu.Microseconds())/1e3/wall.Seconds(), "cpu-ms/s")
		})
	}
}
