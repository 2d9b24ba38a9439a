package jobstore_test

import (
	"testing"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRun_CloseOnTheNilRunOfAFailedStartIsSafe: Start returns a nil *Run
// with its error; closing that (a deferred Close written before the error
// check, say) must neither panic nor disturb the runner that holds the job.
func TestRun_CloseOnTheNilRunOfAFailedStartIsSafe(t *testing.T) {
	dir, holder := startJob(t)

	loser, err := jobstore.Start(dir)
	require.ErrorIs(t, err, jobstore.ErrLocked)
	require.Nil(t, loser)
	assert.NotPanics(t, func() { assert.NoError(t, loser.Close()) })

	// The holder still holds the lock and can write.
	_, err = jobstore.LockJob(dir)
	assert.ErrorIs(t, err, jobstore.ErrLocked, "closing the nil run released nothing")
	require.NoError(t, holder.Progress(0.5, "still mine"))
	require.NoError(t, holder.Close())
}

// readState is the job's state as status.json says.
func readState(t *testing.T, dir jobstore.JobDir) jobstore.State {
	t.Helper()
	st, err := jobstore.ReadStatus(dir)
	require.NoError(t, err)
	require.NotNil(t, st)
	return st.State
}

// Close ends the attempt of a job closed without Finish (.run-N becomes
// .fenced-N, so that Reconcile can mark it lost and nobody revives the
// attempt), and leaves a finished job's attempt directory as it is: its
// status is terminal, so nothing judges the attempt again.
func TestRun_CloseEndsTheAttemptOfAnUnfinishedJobOnly(t *testing.T) {
	for _, finish := range []bool{false, true} {
		t.Run(map[bool]string{false: "unfinished", true: "finished"}[finish], func(t *testing.T) {
			dir, run := startJob(t)
			if finish {
				require.NoError(t, run.Finish(jobstore.Outcome{State: jobstore.Succeeded}))
			}
			require.NoError(t, run.Close())
			if !finish {
				assert.NoDirExists(t, jobstore.RunDirPath(dir, 1))
				assert.DirExists(t, jobstore.FencedDirPath(dir, 1))
				changed, err := jobstore.Reconcile(dir)
				require.NoError(t, err)
				assert.True(t, changed)
				assert.Equal(t, jobstore.Lost, readState(t, dir), "a job closed without Finish is lost")
				return
			}
			assert.DirExists(t, jobstore.RunDirPath(dir, 1))
			assert.NoDirExists(t, jobstore.FencedDirPath(dir, 1))
			changed, err := jobstore.Reconcile(dir)
			require.NoError(t, err)
			assert.False(t, changed, "Reconcile leaves a finished job alone")
			assert.Equal(t, jobstore.Succeeded, readState(t, dir))
			_, err = jobstore.Start(dir)
			require.ErrorIs(t, err, jobstore.ErrWrongState, "a finished job is not started again")
			assert.NoDirExists(t, jobstore.RunDirPath(dir, 2), "nor is another attempt claimed")
		})
	}
}
