package jobstore_test

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/require"
)

// killedClaimant makes a child process take job.lock and claim attempt n of
// dir (mkdir .run-n, as Start and a canceller do first) and SIGKILLs it
// before it writes any status: the crash that leaves a stale claim, and the
// child's record in job.lock.
func killedClaimant(t *testing.T, dir jobstore.JobDir, n uint64) {
	t.Helper()
	kid := startRole(t, claimerRole)
	_, err := kid.stdin.Write([]byte("lockclaim|" + string(dir) + "|" + strconv.FormatUint(n, 10) + "\n"))
	require.NoError(t, err)
	require.Equal(t, "won", kid.line(t), "the child must claim attempt %d", n)
	require.NoError(t, kid.cmd.Process.Kill())
	_ = kid.cmd.Wait() // killed: the error says so
	require.DirExists(t, jobstore.RunDirPath(dir, n), "the killed claimant's claim stays behind")
}

// requireTakenOver checks that attempt n is over and was taken over.
func requireTakenOver(t *testing.T, dir jobstore.JobDir, n uint64) {
	t.Helper()
	require.NoDirExists(t, jobstore.RunDirPath(dir, n))
	require.FileExists(t, filepath.Join(jobstore.FencedDirPath(dir, n), "fenced-by"))
}

func TestStart_TakesOverClaimOfKilledClaimantAtOnce(t *testing.T) {
	dir, err := jobstore.Submit(tempDir(t), jobstore.JobSpec{ID: "j", Kind: "k"})
	require.NoError(t, err)
	killedClaimant(t, dir, 1)

	r, err := jobstore.Start(dir)
	require.NoError(t, err, "a claim whose claimant is dead must not block the job")
	t.Cleanup(func() { _ = r.Close() })
	st, err := jobstore.ReadStatus(dir)
	require.NoError(t, err)
	require.Equal(t, jobstore.Running, st.State)
	require.EqualValues(t, 2, st.Attempt)
	require.Equal(t, os.Getpid(), st.PID)
	requireTakenOver(t, dir, 1)
	require.NoError(t, r.Finish(jobstore.Outcome{State: jobstore.Succeeded}))
}

func TestStart_LiveClaimantIsNotTakenOver(t *testing.T) {
	dir, err := jobstore.Submit(tempDir(t), jobstore.JobSpec{ID: "j", Kind: "k"})
	require.NoError(t, err)
	_, err = jobstore.ClaimAttempt(dir, 1) // a claimant whose record nothing holds: judged by its lease
	require.NoError(t, err)

	for range 2 {
		_, err = jobstore.Start(dir)
		require.ErrorIs(t, err, jobstore.ErrLocked)
		changed, err := jobstore.Reconcile(dir)
		require.NoError(t, err)
		require.False(t, changed)
	}
	require.DirExists(t, jobstore.RunDirPath(dir, 1))
	require.NoDirExists(t, jobstore.FencedDirPath(dir, 1))
	st, err := jobstore.ReadStatus(dir)
	require.NoError(t, err)
	require.Equal(t, jobstore.Queued, st.State)
}

func TestReconcile_ClearsStaleClaimOfQueuedJob(t *testing.T) {
	for _, tc := range []struct {
		name      string
		reconcile func(t *testing.T, dir jobstore.JobDir)
	}{
		{"Reconcile", func(t *testing.T, dir jobstore.JobDir) {
			changed, err := jobstore.Reconcile(dir)
			require.NoError(t, err)
			require.False(t, changed, "the status stays queued")
		}},
		{"ReconcileAll", func(t *testing.T, dir jobstore.JobDir) {
			res, err := jobstore.ReconcileAll(filepath.Dir(string(dir)))
			require.NoError(t, err)
			require.Len(t, res, 1)
			require.NoError(t, res[0].Err)
			require.False(t, res[0].Changed, "the status stays queued")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, err := jobstore.Submit(tempDir(t), jobstore.JobSpec{ID: "j", Kind: "k"})
			require.NoError(t, err)
			before, err := jobstore.ReadStatus(dir)
			require.NoError(t, err)

			// Two crashed claimants in a row: the second claimed past the
			// first's fenced attempt.
			killedClaimant(t, dir, 1)
			tc.reconcile(t, dir)
			requireTakenOver(t, dir, 1)
			killedClaimant(t, dir, 2)
			tc.reconcile(t, dir)
			requireTakenOver(t, dir, 2)

			st, err := jobstore.ReadStatus(dir)
			require.NoError(t, err)
			require.Equal(t, *before, *st, "clearing a claim writes no status")

			r, err := jobstore.Start(dir)
			require.NoError(t, err)
			t.Cleanup(func() { _ = r.Close() })
			require.EqualValues(t, 3, r.Status().Attempt)
		})
	}
}

func TestRequestCancel_QueuedJobWithStaleClaimIsCancelled(t *testing.T) {
	dir, err := jobstore.Submit(tempDir(t), jobstore.JobSpec{ID: "j", Kind: "k"})
	require.NoError(t, err)
	killedClaimant(t, dir, 1)

	require.NoError(t, jobstore.RequestCancel(dir, jobstore.CancelRequest{RequestedBy: "t", Reason: "stale"}))
	st, err := jobstore.ReadStatus(dir)
	require.NoError(t, err)
	require.Equal(t, jobstore.Cancelled, st.State)
	require.EqualValues(t, 2, st.Attempt)
	requireTakenOver(t, dir, 1)
	_, err = jobstore.Start(dir)
	require.ErrorIs(t, err, jobstore.ErrCancelRequested)
}

// A taker that won the fence of a dead runner's attempt 1, claimed attempt 2
// holding job.lock, and was killed before its first status write: its claim
// is judged by job.lock's record (a dead pid on this host) and fenced, and
// the job goes on as attempt 3, at once.
func TestTakeOver_AFenceWinnerKilledAfterItsClaimIsTakenOverAtOnce(t *testing.T) {
	t.Run("Start", func(t *testing.T) {
		dir := jobstore.DeadRunnerFencedByADeadTaker(t)
		killedClaimant(t, dir, 2)
		_, err := jobstore.Start(dir)
		require.ErrorIs(t, err, jobstore.ErrWrongState, "a dead winner's claim must not block the job: the dead runner's attempt, its only one, ends lost")
		st, err := jobstore.ReadStatus(dir)
		require.NoError(t, err)
		require.Equal(t, jobstore.Lost, st.State)
		require.EqualValues(t, 3, st.Attempt, "lost is written by the starter's own attempt")
		require.EqualValues(t, 3, st.Seq)
		requireTakenOver(t, dir, 2)
	})
	t.Run("Reconcile", func(t *testing.T) {
		dir := jobstore.DeadRunnerFencedByADeadTaker(t)
		killedClaimant(t, dir, 2)
		changed, err := jobstore.Reconcile(dir)
		require.NoError(t, err)
		require.True(t, changed, "the dead runner's job must be marked lost")
		st, err := jobstore.ReadStatus(dir)
		require.NoError(t, err)
		require.Equal(t, jobstore.Lost, st.State)
		require.EqualValues(t, 3, st.Attempt, "lost is written by the reconciler's own attempt")
		requireTakenOver(t, dir, 2)
	})
}
