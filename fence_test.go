package jobstore_test

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/require"
)

func TestFenceAttempt_OneWinnerAmongGoroutinesAndProcesses(t *testing.T) {
	root := tempDir(t)
	kids := []*child{startRole(t, claimerRole), startRole(t, claimerRole)}
	for i := range 30 {
		dir, err := jobstore.Submit(root, jobstore.JobSpec{ID: fmt.Sprintf("j%d", i), Kind: "k"})
		require.NoError(t, err)
		_, err = jobstore.ClaimAttempt(dir, 1, time.Minute, "h")
		require.NoError(t, err)
		require.Equal(t, 1, raceAttempt(t, kids, 8, "fence", dir, 1), "round %d: exactly one fencer must win", i)
		_, err = os.Lstat(jobstore.FencedDirPath(dir, 1))
		require.NoError(t, err)
	}
}

// After a fence, the stale owner's next write fails with ErrNotOwner, and
// the record the fencer wrote stands, with no temp file left beside it.
func TestWriteStatusFenced_StaleOwnerCannotWriteAfterFence(t *testing.T) {
	for _, noSync := range []bool{false, true} {
		t.Run(fmt.Sprintf("noSync=%v", noSync), func(t *testing.T) {
			dir, err := jobstore.Submit(tempDir(t), jobstore.JobSpec{ID: "j", Kind: "k"})
			require.NoError(t, err)
			_, err = jobstore.ClaimAttempt(dir, 1, time.Minute, "hostA")
			require.NoError(t, err)
			var opts []jobstore.WriteOption
			if noSync {
				opts = append(opts, jobstore.NoSync())
			}
			require.NoError(t, jobstore.WriteStatusFenced(dir, 1, jobstore.JobStatus{State: jobstore.Running, Seq: 2}, opts...))

			won, err := jobstore.FenceAttempt(dir, 1)
			require.NoError(t, err)
			require.True(t, won)
			now := jobstore.Now()
			require.NoError(t, jobstore.WriteStatus(dir, jobstore.JobStatus{State: jobstore.Lost, Seq: 3, FinishedAt: &now}))
			before, err := os.ReadFile(dir.StatusPath())
			require.NoError(t, err)

			err = jobstore.WriteStatusFenced(dir, 1, jobstore.JobStatus{State: jobstore.Running, Seq: 3}, opts...)
			require.ErrorIs(t, err, jobstore.ErrNotOwner)
			var je *jobstore.Error
			require.ErrorAs(t, err, &je)
			require.Contains(t, je.Remedy, "stop working on the job")
			after, err := os.ReadFile(dir.StatusPath())
			require.NoError(t, err)
			require.Equal(t, string(before), string(after), "the fencer's record must stand")
			swept, err := jobstore.SweepTemps(dir, 0)
			require.NoError(t, err)
			require.Empty(t, swept, "no temp file may be left in the job directory")
		})
	}
}

// A temp file created before the fence cannot be renamed after it: the
// rename resolves .run-N by path. This is the pause between the two steps
// that a self-check of the lease cannot cover.
func TestWriteStatusFenced_RenameAfterFenceFails(t *testing.T) {
	dir, err := jobstore.Submit(tempDir(t), jobstore.JobSpec{ID: "j", Kind: "k"})
	require.NoError(t, err)
	run, err := jobstore.ClaimAttempt(dir, 1, time.Minute, "hostA")
	require.NoError(t, err)
	tmp := run + "/.status.json123"
	require.NoError(t, os.WriteFile(tmp, []byte(`{}`), 0o644))
	won, err := jobstore.FenceAttempt(dir, 1)
	require.NoError(t, err)
	require.True(t, won)
	require.ErrorIs(t, os.Rename(tmp, dir.StatusPath()), os.ErrNotExist)
}

func TestRenewer_LearnsOfTheFence(t *testing.T) {
	dir, err := jobstore.Submit(tempDir(t), jobstore.JobSpec{ID: "j", Kind: "k"})
	require.NoError(t, err)
	_, err = jobstore.ClaimAttempt(dir, 1, time.Minute, "hostA")
	require.NoError(t, err)
	r, err := jobstore.StartRenewer(dir, 1, 30*time.Millisecond)
	require.NoError(t, err)
	t.Cleanup(r.Stop)
	require.NoError(t, r.Check(time.Now()))
	_, err = jobstore.FenceAttempt(dir, 1)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return r.Check(time.Now()) != nil }, 10*time.Second, 5*time.Millisecond)
	require.ErrorIs(t, r.Check(time.Now()), jobstore.ErrNotOwner)
}

func TestRenewer_LeaseLapsesByTheRunnersOwnClock(t *testing.T) {
	dir, err := jobstore.Submit(tempDir(t), jobstore.JobSpec{ID: "j", Kind: "k"})
	require.NoError(t, err)
	_, err = jobstore.ClaimAttempt(dir, 1, time.Minute, "hostA")
	require.NoError(t, err)
	const lease = time.Hour // no background renewal during the test
	r, err := jobstore.StartRenewer(dir, 1, lease)
	require.NoError(t, err)
	t.Cleanup(r.Stop)
	now := time.Now()
	require.NoError(t, r.Check(now.Add(lease/2)))
	err = r.Check(now.Add(lease * 2 / 3))
	require.ErrorIs(t, err, jobstore.ErrNotOwner)
	require.Contains(t, err.Error(), "lease lapsed")
}

// A fencer that renamed the claim and died before marking it leaves the
// takeover to the next fencer; the owner's own rename (a release) does too.
func TestFenceAttempt_RenamedButUnmarkedIsTakenByTheNextFencer(t *testing.T) {
	dir, err := jobstore.Submit(tempDir(t), jobstore.JobSpec{ID: "j", Kind: "k"})
	require.NoError(t, err)
	_, err = jobstore.ClaimAttempt(dir, 1, time.Minute, "hostA")
	require.NoError(t, err)
	require.NoError(t, os.Rename(jobstore.RunDirPath(dir, 1), jobstore.FencedDirPath(dir, 1)))
	won, err := jobstore.FenceAttempt(dir, 1)
	require.NoError(t, err)
	require.True(t, won)
	won, err = jobstore.FenceAttempt(dir, 1)
	require.NoError(t, err)
	require.False(t, won)
}

func TestFenceAttempt_NeverClaimedIsNotWon(t *testing.T) {
	dir, err := jobstore.Submit(tempDir(t), jobstore.JobSpec{ID: "j", Kind: "k"})
	require.NoError(t, err)
	won, err := jobstore.FenceAttempt(dir, 1)
	require.NoError(t, err)
	require.False(t, won)
}

// A Run's writes create their temp file through the attempt directory it
// holds open since its claim. After a fence that directory is .fenced-N:
// the next write fails with ErrNotOwner at the rename, the fencer's record
// stands, and the temp file is removed from .fenced-N too.
func TestRun_FencedRunLeavesNoTempFileInItsFencedDirectory(t *testing.T) {
	for _, write := range []struct {
		name string
		call func(*jobstore.Run) error
	}{
		{"progress (NoSync)", func(r *jobstore.Run) error { return r.Progress(0.5, "half") }},
		{"set message (durable)", func(r *jobstore.Run) error { return r.SetMessage("still here") }},
		{"finish (durable)", func(r *jobstore.Run) error {
			return r.Finish(jobstore.Outcome{State: jobstore.Succeeded})
		}},
	} {
		t.Run(write.name, func(t *testing.T) {
			dir, err := jobstore.Submit(tempDir(t), jobstore.JobSpec{ID: "j", Kind: "k"})
			require.NoError(t, err)
			run, err := jobstore.Start(dir, jobstore.WithProgressInterval(0))
			require.NoError(t, err)
			t.Cleanup(func() { _ = run.Close() })

			won, err := jobstore.FenceAttempt(dir, 1)
			require.NoError(t, err)
			require.True(t, won)
			now := jobstore.Now()
			require.NoError(t, jobstore.WriteStatus(dir, jobstore.JobStatus{State: jobstore.Lost, Seq: 5, Attempt: 1, FinishedAt: &now}))
			before, err := os.ReadFile(dir.StatusPath())
			require.NoError(t, err)

			require.ErrorIs(t, write.call(run), jobstore.ErrNotOwner)
			after, err := os.ReadFile(dir.StatusPath())
			require.NoError(t, err)
			require.Equal(t, string(before), string(after), "the fencer's record must stand")
			requireNoTempFiles(t, dir, "a fenced write must remove its temp file wherever it made it")
			require.NoDirExists(t, jobstore.RunDirPath(dir, 1), "a fenced write must not revive .run-1")
		})
	}
}
