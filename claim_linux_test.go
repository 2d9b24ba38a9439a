package jobstore_test

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// hostileDeadline only guards against a call that hangs (a FIFO opened
// without O_NONBLOCK would); it is not a speed limit.
const hostileDeadline = time.Minute

// within runs f and fails the test if it does not return.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(hostileDeadline):
		t.Fatalf("%s hangs", what)
	}
}

// runningElsewhere makes dir's status say that attempt 1 runs on another
// host with a short lease, and .run-1 exist, as a live or dead runner there
// leaves it; plant then puts something hostile in .run-1.
func runningElsewhere(t *testing.T, root, id string, plant func(t *testing.T, run string)) jobstore.JobDir {
	t.Helper()
	dir, err := jobstore.Submit(root, jobstore.JobSpec{ID: id, Kind: "k"})
	require.NoError(t, err)
	now := jobstore.Now()
	require.NoError(t, jobstore.WriteStatus(dir, jobstore.JobStatus{State: jobstore.Running, Seq: 2, StartedAt: &now,
		PID: 1, Host: "elsewhere", Lease: 300 * time.Millisecond, Attempt: 1}))
	run := jobstore.RunDirPath(dir, 1)
	require.NoError(t, os.Mkdir(run, 0o755))
	plant(t, run)
	return dir
}

// Hostile files in an attempt directory (a FIFO, a link to a device, a huge
// sparse file, the directory itself a link out of the root) never make
// Start, Reconcile, ReconcileAll or RequestCancel hang, read without bound,
// or touch anything outside: a lease that is not a regular file proves no
// life and is judged as a lease that never changes (gone after a lease);
// an attempt directory that is a link is that job's error (ErrNotRegular);
// and ReconcileAll reconciles the other jobs.
func TestAttemptLayer_HostileFilesAreThatJobsErrorAndNothingHangs(t *testing.T) {
	outside := tempDir(t)
	require.NoError(t, os.WriteFile(filepath.Join(outside, jobstore.LeaseName), []byte("1\n"), 0o644))
	for _, tc := range []struct {
		name    string
		plant   func(t *testing.T, run string)
		refused bool // ErrNotRegular; else judged as a lease that never changes
	}{
		{"a FIFO lease", func(t *testing.T, run string) {
			require.NoError(t, unix.Mkfifo(filepath.Join(run, jobstore.LeaseName), 0o644))
		}, false},
		{"a FIFO owner.json of an older jobstore", func(t *testing.T, run string) {
			require.NoError(t, unix.Mkfifo(filepath.Join(run, "owner.json"), 0o644))
		}, false},
		{"a lease linked to /dev/zero", func(t *testing.T, run string) {
			require.NoError(t, os.Symlink("/dev/zero", filepath.Join(run, jobstore.LeaseName)))
		}, false},
		{"an owner.json linked to /dev/zero", func(t *testing.T, run string) {
			require.NoError(t, os.Symlink("/dev/zero", filepath.Join(run, "owner.json")))
		}, false},
		{"a 3 GiB sparse lease", func(t *testing.T, run string) {
			f, err := os.Create(filepath.Join(run, jobstore.LeaseName))
			require.NoError(t, err)
			require.NoError(t, f.Truncate(3<<30))
			require.NoError(t, f.Close())
		}, false},
		{"the attempt directory a link out of the root", func(t *testing.T, run string) {
			require.NoError(t, os.Remove(run))
			require.NoError(t, os.Symlink(outside, run))
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := tempDir(t)
			dir := runningElsewhere(t, root, "hostile", tc.plant)
			dead, err := jobstore.Submit(root, jobstore.JobSpec{ID: "dead", Kind: "k"})
			require.NoError(t, err)
			now := jobstore.Now()
			require.NoError(t, jobstore.WriteStatus(dead, jobstore.JobStatus{State: jobstore.Running, Seq: 2, StartedAt: &now, PID: 1}))

			var results []jobstore.ReconcileResult
			within(t, "ReconcileAll", func() {
				results, err = jobstore.ReconcileAll(root)
			})
			require.NoError(t, err)
			require.Len(t, results, 2)
			byID := map[string]jobstore.ReconcileResult{}
			for _, r := range results {
				byID[r.Dir.ID()] = r
			}
			assert.True(t, byID["dead"].Changed, "the other job is reconciled: %v", byID["dead"].Err)
			if tc.refused {
				assert.ErrorIs(t, byID["hostile"].Err, jobstore.ErrNotRegular)
			} else {
				assert.NoError(t, byID["hostile"].Err)
				assert.True(t, byID["hostile"].Changed, "a lease that never changes is judged gone")
			}
			within(t, "Reconcile", func() { _, _ = jobstore.Reconcile(dir) })
			within(t, "Start", func() {
				if r, err := jobstore.Start(dir); err == nil {
					_ = r.Close()
				}
			})
			within(t, "RequestCancel", func() { _ = jobstore.RequestCancel(dir, jobstore.CancelRequest{}) })
			b, err := os.ReadFile(filepath.Join(outside, jobstore.LeaseName))
			require.NoError(t, err)
			assert.Equal(t, "1\n", string(b), "nothing outside the root is written")
			assert.Equal(t, []string{jobstore.LeaseName}, names(t, outside), "nothing is created outside the root")
		})
	}
}

// A job directory exchanged for a link to a directory outside the root, in
// a loop (renameat2(RENAME_EXCHANGE), so that at any instant the path names
// one or the other), while Start, Progress, Close, Reconcile, ReconcileAll
// and RequestCancel run on it: every operation either acts on the job
// directory or fails; nothing in the outside directory (which looks like a
// job, with attempts of its own) is created, renamed, removed or written.
func TestAttemptLayer_JobDirectoryExchangedForALinkTouchesNothingOutside(t *testing.T) {
	const (
		rounds = 30
		jobs   = 4
	)
	outside := tempDir(t)
	// The outside looks like a job, with an attempt of its own, and room
	// for the attempts a path-based layer would claim there.
	for _, d := range []string{".run-9", ".fenced-8"} {
		require.NoError(t, os.Mkdir(filepath.Join(outside, d), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(outside, d, jobstore.LeaseName), []byte("7\n"), 0o644))
	}
	for _, f := range []string{jobstore.SpecFile, jobstore.StatusFile} {
		require.NoError(t, os.WriteFile(filepath.Join(outside, f), []byte(`{"outside": true}`+"\n"), 0o644))
	}
	before := snapshot(t, outside) // the directories' mtimes too: nothing may be created there even for an instant

	var exchanges atomic.Int64
	for round := range rounds {
		root := tempDir(t)
		var dirs []jobstore.JobDir
		var links []string
		for i := range jobs {
			dir, err := jobstore.Submit(root, jobstore.JobSpec{ID: fmt.Sprintf("j%d", i), Kind: "k"})
			require.NoError(t, err)
			link := filepath.Join(root, fmt.Sprintf(".link%d", i))
			require.NoError(t, os.Symlink(outside, link))
			dirs, links = append(dirs, dir), append(links, link)
		}
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() { // the exchanger
			for k := 0; ; k++ {
				select {
				case <-stop:
					return
				default:
				}
				i := k % jobs
				if err := unix.Renameat2(unix.AT_FDCWD, string(dirs[i]), unix.AT_FDCWD, links[i], unix.RENAME_EXCHANGE); err == nil {
					exchanges.Add(1)
				}
			}
		})
		for i := range jobs {
			dir := dirs[i]
			wg.Go(func() { // a runner that dies without finishing, then the reconcilers
				for range 5 {
					if r, err := jobstore.Start(dir, jobstore.WithProgressInterval(0)); err == nil {
						_ = r.Progress(0.5, "half")
						_ = r.Close()
					}
					_, _ = jobstore.Reconcile(dir)
				}
			})
		}
		wg.Go(func() {
			_, _ = jobstore.ReconcileAll(root)
			_ = jobstore.RequestCancel(dirs[0], jobstore.CancelRequest{RequestedBy: "t"})
		})
		time.Sleep(20 * time.Millisecond)
		close(stop)
		wg.Wait()
		// Put every job directory back in its place for the next round.
		for i := range jobs {
			if fi, err := os.Lstat(string(dirs[i])); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
				require.NoError(t, unix.Renameat2(unix.AT_FDCWD, string(dirs[i]), unix.AT_FDCWD, links[i], unix.RENAME_EXCHANGE))
			}
		}
		require.Equal(t, before, snapshot(t, outside), "round %d: the directory outside the root changed", round)
	}
	t.Logf("%d exchanges over %d rounds", exchanges.Load(), rounds)
	require.Positive(t, exchanges.Load(), "the exchanger ran")
}
