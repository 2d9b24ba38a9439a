//go:build unix

package jobstore_test

import (
	"context"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/axqua/jobstore"
)

// cpuTime is the CPU (user + system) the process has used.
func cpuTime(b *testing.B) time.Duration {
	b.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkWatchIdleCPU measures the CPU that watchers of idle jobs cost,
// by getrusage over idleFor: 100 Watch calls with the default 1 s safety
// poll (impl=watch) against 100 goroutines that read status.json once a
// second (impl=poll-1Hz, the baseline: `jobstore watch` before Watch). The
// figure is the whole process's CPU (runtime and GC included) per second,
// per watcher: an upper bound on a watcher's own.
//
//	go test -run '^$' -bench 'WatchIdleCPU' -benchtime 1x -count 3 . | tee idle.txt
func BenchmarkWatchIdleCPU(b *testing.B) {
	const (
		watchers = 100
		idleFor  = 3 * time.Second
	)
	root := benchDir(b)
	dirs := make([]jobstore.JobDir, watchers)
	for i := range dirs {
		dirs[i] = benchJob(b, root, "job"+strconv.Itoa(i))
		if err := jobstore.WriteStatus(dirs[i], jobstore.JobStatus{State: jobstore.Running, Seq: 1}); err != nil {
			b.Fatal(err)
		}
	}
	for _, impl := range []struct {
		name  string
		start func(ctx context.Context, dir jobstore.JobDir)
	}{
		{"poll-1Hz", func(ctx context.Context, dir jobstore.JobDir) {
			go func() {
				tick := time.NewTicker(time.Second)
				defer tick.Stop()
				for {
					select {
					case <-ctx.Done():
						return
					case <-tick.C:
						if _, err := jobstore.ReadStatus(dir); err != nil {
							b.Error(err)
						}
					}
				}
			}()
		}},
		{"watch", func(ctx context.Context, dir jobstore.JobDir) {
			ch, err := jobstore.Watch(ctx, dir)
			if err != nil {
				b.Fatal(err)
			}
			<-ch // the current status; then nothing changes
			go func() {
				for range ch {
				}
			}()
		}},
	} {
		b.Run("impl="+impl.name, func(b *testing.B) {
			var cpu, wall time.Duration
			for b.Loop() {
				ctx, cancel := context.WithCancel(context.Background())
				for _, dir := range dirs {
					impl.start(ctx, dir)
				}
				c0, t0 := cpuTime(b), time.Now()
				time.Sleep(idleFor)
				cpu += cpuTime(b) - c0
				wall += time.Since(t0)
				cancel()
			}
			perSec := float64(cpu) / float64(time.Millisecond) / wall.Seconds()
			b.ReportMetric(perSec/watchers, "cpu-ms/s/watcher")
			b.ReportMetric(perSec, "cpu-ms/s")
		})
	}
}
