//go:build unix

package jobstore_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// jobLifeStep is one file system step that every drained job makes, and
// how many times a job makes it (a Start and a Finish each publish a
// status).
type jobLifeStep struct {
	name   string
	perJob int
	do     func(b *testing.B, dir string)
}

// jobLifeSteps returns the steps of a drained job's life that change the disk,
// in the order a Start and a Finish make them, each done bare (no jobstore)
// on a fresh job directory of the repository's disk holding an empty
// job.lock, as Submit makes it: job.lock opened, locked, its holder's line
// written and emptied again, the claim's mkdir of .run-1, the status's temp file created and written
// in .run-1, its fsync, its rename over status.json, the job directory's
// fsync; and, for scale, the lookup of a missing file (cancel.json), the
// cheapest call a job makes.
func jobLifeSteps() []jobLifeStep {
	return []jobLifeStep{
		{"lock", 1, func(b *testing.B, dir string) {
			f, err := os.OpenFile(filepath.Join(dir, "job.lock"), os.O_RDWR, 0)
			require.NoError(b, err)
			require.NoError(b, syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB))
			_, err = f.WriteAt(make([]byte, 190), 0)
			require.NoError(b, err)
			require.NoError(b, f.Truncate(0))
			require.NoError(b, f.Close())
		}},
		{"mkdir-run", 1, func(b *testing.B, dir string) { require.NoError(b, os.Mkdir(filepath.Join(dir, ".run-1"), 0o777)) }},
		{"create-temp", 2, func(b *testing.B, dir string) {
			require.NoError(b, os.WriteFile(filepath.Join(dir, ".run-1", ".status.json1"), make([]byte, 400), 0o644))
		}},
		{"fsync-temp", 2, func(b *testing.B, dir string) {
			f, err := os.OpenFile(filepath.Join(dir, ".run-1", ".status.json1"), os.O_WRONLY, 0)
			require.NoError(b, err)
			require.NoError(b, f.Sync())
			require.NoError(b, f.Close())
		}},
		{"rename", 2, func(b *testing.B, dir string) {
			require.NoError(b, os.Rename(filepath.Join(dir, ".run-1", ".status.json1"), filepath.Join(dir, "status.json")))
		}},
		{"fsync-dir", 2, func(b *testing.B, dir string) {
			f, err := os.Open(dir)
			require.NoError(b, err)
			require.NoError(b, f.Sync())
			require.NoError(b, f.Close())
		}},
		{"lookup", 0, func(b *testing.B, dir string) {
			_, err := os.Lstat(filepath.Join(dir, "cancel.json"))
			require.ErrorIs(b, err, os.ErrNotExist)
		}},
	}
}

// BenchmarkWorkerDrainFloor measures, on the repository's disk, what each
// step of a drained job's life that changes the disk costs when made bare,
// one job after another on one OS thread: its CPU (the thread's CPU
// clock: the kernel's work for the call, mostly) and its wall time, per
// call (cpu-µs/<step>, wall-µs/<step>). It reports the floor of a job's
// life at parallel 1 from them, each step counted as often as a Start and
// a Finish make it (2 creates, fsyncs and renames of the status, 1 lock
// taken and 1 claim directory): floor-cpu-µs/job, floor-wall-µs/job, and
// the disk's ceiling at parallel 1, floor-jobs/s-p1 (1 s / the wall floor).
// A job made on a Worker costs its floor plus jobstore's lookups and Go
// work, which BenchmarkWorkerDrain's cpu-µs/job-p1 has in the same run.
//
//	go test -run '^$' -bench 'WorkerDrain' -benchtime 3x .
func BenchmarkWorkerDrainFloor(b *testing.B) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if threadCPU() < 0 {
		b.Skip("this system has no CPU clock of a thread")
	}
	root := benchDir(b)
	steps := jobLifeSteps()
	cpu := make([]time.Duration, len(steps))
	wall := make([]time.Duration, len(steps))
	n := 0
	for b.Loop() {
		dir := filepath.Join(root, "j"+strconv.Itoa(n))
		require.NoError(b, os.Mkdir(dir, 0o755))
		require.NoError(b, os.WriteFile(filepath.Join(dir, "job.lock"), nil, 0o644)) // Submit makes it
		for i, s := range steps {
			c0, t0 := threadCPU(), time.Now()
			s.do(b, dir)
			wall[i] += time.Since(t0)
			cpu[i] += threadCPU() - c0
		}
		n++
	}
	var floorCPU, floorWall float64
	for i, s := range steps {
		c := float64(cpu[i].Microseconds()) / float64(n)
		w := float64(wall[i].Microseconds()) / float64(n)
		b.ReportMetric(c, "cpu-µs/"+s.name)
		b.ReportMetric(w, "wall-µs/"+s.name)
		floorCPU += c * float64(s.perJob)
		floorWall += w * float64(s.perJob)
	}
	b.ReportMetric(floorCPU, "floor-cpu-µs/job")
	b.ReportMetric(floorWall, "floor-wall-µs/job")
	b.ReportMetric(1e6/floorWall, "floor-jobs/s-p1")
}
