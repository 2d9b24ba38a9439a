package jobstore_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/axqua/jobstore"
)

// ranJob submits a job, starts it and finishes it with outcome,
// through the API a runner uses; with attempts > 1 its spec allows that
// many.
func ranJob(t *testing.T, root, id string, attempts int, outcome jobstore.State) jobstore.JobDir {
	t.Helper()
	dir, err := jobstore.Submit(root, jobstore.JobSpec{ID: id, Kind: "test", MaxAttempts: attempts})
	require.NoError(t, err)
	r, err := jobstore.Start(dir)
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.Close() })
	if outcome != jobstore.Running {
		require.NoError(t, r.Finish(jobstore.Outcome{State: outcome}))
		require.NoError(t, r.Close())
	}
	return dir
}

// agePaths sets the modification time of each path to age ago.
func agePaths(t *testing.T, age time.Duration, paths ...string) {
	t.Helper()
	when := time.Now().Add(-age)
	for _, p := range paths {
		require.NoError(t, os.Chtimes(p, when, when))
	}
}

// TestSweepTemps_RemovesTheRunDirectoryAFinishedJobLeft: once a finished
// job's status and its attempt's empty .run-N have not changed for
// DefaultSweepAge, the sweep removes .run-N, and the job stays finished:
// it is not started again, and reconciling it changes nothing. Every other
// case keeps the directory: a job young, running, queued again, a .run-N
// that holds a file, or one of a later attempt than the status names.
func TestSweepTemps_RemovesTheRunDirectoryAFinishedJobLeft(t *testing.T) {
	old := 2 * jobstore.DefaultSweepAge
	for _, tc := range []struct {
		name     string
		attempts int
		outcome  jobstore.State
		prepare  func(t *testing.T, dir jobstore.JobDir)
		removed  bool
	}{
		{"succeeded, old", 1, jobstore.Succeeded, func(t *testing.T, dir jobstore.JobDir) {
			agePaths(t, old, jobstore.RunDirPath(dir, 1), dir.StatusPath())
		}, true},
		{"failed, old", 1, jobstore.Failed, func(t *testing.T, dir jobstore.JobDir) {
			agePaths(t, old, jobstore.RunDirPath(dir, 1), dir.StatusPath())
		}, true},
		{"succeeded, status young", 1, jobstore.Succeeded, func(t *testing.T, dir jobstore.JobDir) {
			agePaths(t, old, jobstore.RunDirPath(dir, 1))
		}, false},
		{"succeeded, run directory young", 1, jobstore.Succeeded, func(t *testing.T, dir jobstore.JobDir) {
			agePaths(t, old, dir.StatusPath())
		}, false},
		{"running, old", 1, jobstore.Running, func(t *testing.T, dir jobstore.JobDir) {
			agePaths(t, old, jobstore.RunDirPath(dir, 1), dir.StatusPath())
		}, false},
		{"failed and queued again, old", 2, jobstore.Failed, func(t *testing.T, dir jobstore.JobDir) {
			agePaths(t, old, jobstore.RunDirPath(dir, 1), dir.StatusPath())
		}, false},
		{"succeeded, a file in the run directory", 1, jobstore.Succeeded, func(t *testing.T, dir jobstore.JobDir) {
			writeFile(t, filepath.Join(jobstore.RunDirPath(dir, 1), "lease"), []byte("7\n"))
			agePaths(t, old, filepath.Join(jobstore.RunDirPath(dir, 1), "lease"), jobstore.RunDirPath(dir, 1), dir.StatusPath())
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := tempDir(t)
			dir := ranJob(t, root, "j", tc.attempts, tc.outcome)
			require.DirExists(t, jobstore.RunDirPath(dir, 1), "the attempt's directory this sweep is about")
			tc.prepare(t, dir)
			before := readStatus(t, dir)

			removed, err := jobstore.SweepTemps(dir, 0)
			require.NoError(t, err)
			if !tc.removed {
				assert.Empty(t, removed)
				assert.DirExists(t, jobstore.RunDirPath(dir, 1))
				return
			}
			assert.Equal(t, []string{filepath.Base(jobstore.RunDirPath(dir, 1))}, removed)
			assert.NoDirExists(t, jobstore.RunDirPath(dir, 1))
			assert.ElementsMatch(t, []string{jobstore.SpecFile, jobstore.StatusFile, jobstore.LockFile}, names(t, string(dir)))
			assert.Equal(t, before, readStatus(t, dir), "the status is untouched")

			_, err = jobstore.Start(dir)
			require.ErrorIs(t, err, jobstore.ErrWrongState, "a finished job is not started again")
			changed, err := jobstore.Reconcile(dir)
			require.NoError(t, err)
			assert.False(t, changed)
			assert.Equal(t, before, readStatus(t, dir))
		})
	}
}

// TestReconcileAll_LeavesAFinishedJobItsRecordsAndLock: what a finished job
// keeps once ReconcileAll swept it, DefaultSweepAge after it finished:
// job.json, status.json and job.lock, nothing else.
func TestReconcileAll_LeavesAFinishedJobItsRecordsAndLock(t *testing.T) {
	root := tempDir(t)
	dir := ranJob(t, root, "j", 1, jobstore.Succeeded)
	ageTree(t, root, 2*jobstore.DefaultSweepAge) // the hidden entries of the root
	agePaths(t, 2*jobstore.DefaultSweepAge, jobstore.RunDirPath(dir, 1), dir.StatusPath())

	results, err := jobstore.ReconcileAll(root)
	require.NoError(t, err)
	require.Len(t, results, 1)
	require.NoError(t, results[0].Err)
	assert.Equal(t, []string{filepath.Base(jobstore.RunDirPath(dir, 1))}, results[0].Swept)
	assert.ElementsMatch(t, []string{jobstore.SpecFile, jobstore.StatusFile, jobstore.LockFile}, names(t, string(dir)))
}
