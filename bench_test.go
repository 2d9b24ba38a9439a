package jobstore_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/axqua/jobstore"
)

// Benchmarks pair each call with a baseline written by hand, in the same
// run, so that the ratio means something on a shared, noisy machine:
//
//	go test -run '^$' -bench 'WriteStatus|ReadStatus' -count 10 . | tee bench.txt
//	benchstat -col /impl bench.txt
//
// fsync costs depend on the disk: the directories live on the repository's
// own filesystem (benchDir), never on a tmpfs /tmp.

// benchDir makes a scratch directory beside the package sources (the repo's
// disk), removed after the benchmark.
func benchDir(b *testing.B) string {
	b.Helper()
	dir, err := os.MkdirTemp(".", ".bench-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	abs, err := filepath.Abs(dir)
	if err != nil {
		b.Fatal(err)
	}
	return abs
}

func benchJob(b *testing.B, root, id string) jobstore.JobDir {
	b.Helper()
	dir, err := jobstore.DirFor(root, id)
	if err != nil {
		b.Fatal(err)
	}
	if err := jobstore.WriteSpec(dir, jobstore.JobSpec{ID: id, Kind: "bench"}); err != nil {
		b.Fatal(err)
	}
	return dir
}

func benchStatus(seq int) jobstore.JobStatus {
	p := float64(seq%100) / 100
	start := jobstore.Now()
	return jobstore.JobStatus{State: jobstore.Running, Seq: uint64(seq), Progress: &p, Message: "step " + strconv.Itoa(seq),
		StartedAt: &start, PID: 4242, Host: "bench-host"}
}

// writeByHand is the minimal durable replace: O_EXCL create in the target's
// directory, write, fsync, close, rename, open the directory, fsync, close.
func writeByHand(path string, data []byte) error {
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+strconv.FormatInt(time.Now().UnixNano(), 10))
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	if err := d.Sync(); err != nil {
		return err
	}
	return d.Close()
}

func BenchmarkWriteStatus(b *testing.B) {
	b.Run("impl=baseline", func(b *testing.B) {
		dir := benchJob(b, benchDir(b), "job")
		for i := 0; b.Loop(); i++ {
			if err := writeStatusByHand(dir, i); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("impl=jobstore", func(b *testing.B) {
		dir := benchJob(b, benchDir(b), "job")
		for i := 0; b.Loop(); i++ {
			if err := jobstore.WriteStatus(dir, benchStatus(i)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("impl=jobstore-nosync", func(b *testing.B) {
		dir := benchJob(b, benchDir(b), "job")
		for i := 0; b.Loop(); i++ {
			if err := jobstore.WriteStatus(dir, benchStatus(i), jobstore.NoSync()); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkReadStatus(b *testing.B) {
	dir := benchJob(b, benchDir(b), "job")
	if err := jobstore.WriteStatus(dir, benchStatus(7)); err != nil {
		b.Fatal(err)
	}
	b.Run("impl=baseline", func(b *testing.B) {
		for b.Loop() {
			if err := readStatusByHand(dir); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("impl=jobstore", func(b *testing.B) {
		for b.Loop() {
			st, err := jobstore.ReadStatus(dir)
			if err != nil || st == nil {
				b.Fatal(st, err)
			}
		}
	})
}

// BenchmarkWriteStatusManyJobs writes the statuses of distinct jobs from
// 64 goroutines at once (at least: a multiple of GOMAXPROCS), each its own
// job, beside the same number of goroutines running the bare protocol
// (writeByHand) on jobs of their own: writers of different jobs share no
// lock, so the ratio is what WriteStatus adds, not what a mutex takes away.
func BenchmarkWriteStatusManyJobs(b *testing.B) {
	const writers = 64
	perProc := (writers + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0)
	run := func(b *testing.B, write func(dir jobstore.JobDir, seq int) error) {
		root := benchDir(b)
		dirs := make([]jobstore.JobDir, perProc*runtime.GOMAXPROCS(0))
		for i := range dirs {
			dirs[i] = benchJob(b, root, "job"+strconv.Itoa(i))
		}
		var next atomic.Int64
		b.SetParallelism(perProc)
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			dir := dirs[next.Add(1)-1] // one job per goroutine
			for i := 0; pb.Next(); i++ {
				if err := write(dir, i); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	b.Run("impl=baseline", func(b *testing.B) { run(b, writeStatusByHand) })
	b.Run("impl=jobstore", func(b *testing.B) {
		run(b, func(dir jobstore.JobDir, seq int) error { return jobstore.WriteStatus(dir, benchStatus(seq)) })
	})
}
