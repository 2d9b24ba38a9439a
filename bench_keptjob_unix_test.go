//go:build unix

package jobstore_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/axqua/jobstore"
)

// BenchmarkKeptJobDisk measures what a finished job keeps on disk: keptJobs
// jobs are submitted, started and finished (succeeded) through the API a
// runner uses, and a worker looks at the root once (StartNext, which
// retires the live-index entries of ended jobs); then everything under
// the root but the root itself and its .submit is counted: inodes, and
// bytes allocated (st_blocks, what du counts), per job. "swept" counts
// again once the root's files are 2*DefaultSweepAge old and ReconcileAll
// has run, as a root's periodic reconcile leaves it.
//
//	go test -run '^$' -bench 'KeptJobDisk' -benchtime 1x .
func BenchmarkKeptJobDisk(b *testing.B) {
	const keptJobs = 50
	for b.Loop() {
		root := filepath.Join(benchDir(b), "jobs")
		for i := range keptJobs {
			dir, err := jobstore.Submit(root, jobstore.JobSpec{ID: "kept-" + strconv.Itoa(i), Kind: "bench"})
			if err != nil {
				b.Fatal(err)
			}
			r, err := jobstore.Start(dir)
			if err != nil {
				b.Fatal(err)
			}
			if err := r.Finish(jobstore.Outcome{State: jobstore.Succeeded}); err != nil {
				b.Fatal(err)
			}
			if err := r.Close(); err != nil {
				b.Fatal(err)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), keptJobLook)
		if r, err := jobstore.StartNext(ctx, root); !errors.Is(err, context.DeadlineExceeded) {
			_ = r.Close()
			b.Fatalf("StartNext found a job to start in a root of finished jobs: %v", err)
		}
		cancel()
		inodes, bytes := diskUse(b, root)
		b.ReportMetric(float64(inodes)/keptJobs, "finished-inodes/job")
		b.ReportMetric(float64(bytes)/keptJobs, "finished-bytes/job")

		when := time.Now().Add(-2 * jobstore.DefaultSweepAge)
		if err := filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			return os.Chtimes(p, when, when)
		}); err != nil {
			b.Fatal(err)
		}
		if _, err := jobstore.ReconcileAll(root); err != nil {
			b.Fatal(err)
		}
		inodes, bytes = diskUse(b, root)
		b.ReportMetric(float64(inodes)/keptJobs, "swept-inodes/job")
		b.ReportMetric(float64(bytes)/keptJobs, "swept-bytes/job")
	}
}

// keptJobLook is how long BenchmarkKeptJobDisk lets a worker look at a
// root that holds nothing to start: its first look is all it needs.
const keptJobLook = 500 * time.Millisecond

// diskUse counts the inodes under root and the bytes allocated to them,
// root itself and its .submit left out (one per root, not per job).
func diskUse(b *testing.B, root string) (inodes, bytes int64) {
	b.Helper()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		if d.Name() == ".submit" && filepath.Dir(p) == root {
			return filepath.SkipDir
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		inodes++
		bytes += fi.Sys().(*syscall.Stat_t).Blocks * 512
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return inodes, bytes
}
