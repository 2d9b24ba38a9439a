package jobstore

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/axqua/jobstore/internal/attempt"
	"github.com/axqua/jobstore/internal/fsys"
	"github.com/stretchr/testify/require"
)

// deadRunnerFencedByADeadTaker makes a job whose runner of attempt 1 died on
// this host, and whose taker won the fence of attempt 1 and died before it
// claimed attempt 2: the crash that must not leave the job running for good.
func deadRunnerFencedByADeadTaker(t *testing.T) JobDir {
	t.Helper()
	dir := submitQueued(t)
	host, err := HostID()
	require.NoError(t, err)
	require.NoError(t, os.Mkdir(runPath(dir, 1), 0o755))
	st := mustStatus(t, dir)
	st.State, st.Seq, st.Attempt, st.Host, st.PIDScope = Running, 2, 1, host, selfScope()
	st.PID, st.PIDStart = deadPID(t), "1"
	require.NoError(t, WriteStatus(dir, st))
	jd, err := fsys.Open(string(dir), true)
	require.NoError(t, err)
	defer jd.Close()
	won, err := attempt.Fence(jd, 1, "a taker that died")
	require.NoError(t, err)
	require.True(t, won)
	return dir
}

// deadPID is the pid of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	require.NoError(t, cmd.Run())
	return cmd.Process.Pid
}

func TestTakeOver_AFenceWinnerThatDiedBeforeItsClaimNeverBlocksTheJob(t *testing.T) {
	t.Run("Start", func(t *testing.T) {
		dir := deadRunnerFencedByADeadTaker(t)
		_, err := Start(dir)
		require.ErrorIs(t, err, ErrWrongState, "the job must not stay blocked by a dead fence winner: the dead runner's attempt, its only one, ends lost")
		st := mustStatus(t, dir)
		require.Equal(t, Lost, st.State)
		require.EqualValues(t, 2, st.Attempt, "lost is written by the starter's own attempt")
		require.EqualValues(t, 3, st.Seq)
		require.FileExists(t, filepath.Join(fencedPath(dir, 2), attempt.EndMarker))
	})
	t.Run("Reconcile", func(t *testing.T) {
		dir := deadRunnerFencedByADeadTaker(t)
		changed, err := Reconcile(dir)
		require.NoError(t, err)
		require.True(t, changed, "the dead runner's job must be marked lost")
		st := mustStatus(t, dir)
		require.Equal(t, Lost, st.State)
		require.EqualValues(t, 3, st.Seq)
		require.EqualValues(t, 2, st.Attempt, "lost is written by the reconciler's own attempt")
		require.FileExists(t, filepath.Join(fencedPath(dir, 2), attempt.EndMarker))
		changed, err = Reconcile(dir)
		require.NoError(t, err)
		require.False(t, changed)
	})
}

// A process that loses the fence of attempt 1 to a winner whose first record
// has landed stands down before it claims anything: the winner's attempt
// (running) or outcome (terminal) decides, and no claim of attempt 2 is
// made by the loser.
func TestTakeOver_AFenceLoserStandsDownWhenTheWinnersRecordLanded(t *testing.T) {
	cases := []struct {
		name    string
		landed  State
		want    error
		wantAt  func(JobDir) string
		subject string
	}{
		{"running", Running, ErrLocked, func(d JobDir) string { return fencedPath(d, 1) }, ""},
		{"terminal", Lost, ErrWrongState, JobDir.StatusPath, "state"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := deadRunnerFencedByADeadTaker(t)
			last := mustStatus(t, dir) // what the loser read: attempt 1, its runner gone
			landed := last
			landed.State, landed.Seq, landed.Attempt, landed.PID = tc.landed, 3, 2, os.Getpid()
			if tc.landed.Terminal() {
				now := Now()
				landed.FinishedAt = &now
			}
			require.NoError(t, WriteStatus(dir, landed))

			jd, err := openJobDir("start", dir)
			require.NoError(t, err)
			t.Cleanup(func() { jd.Close() })
			lk, err := lockJobIn("start", jd)
			require.NoError(t, err)
			t.Cleanup(func() { _ = lk.Unlock() })
			host, err := HostID()
			require.NoError(t, err)
			c, now, err := (&claimant{"start", jd, lk, claimOptions{host: host, lease: DefaultLease}}).takeOver(&last, true)
			require.ErrorIs(t, err, tc.want)
			require.Nil(t, c)
			require.Nil(t, now)
			var e *Error
			require.ErrorAs(t, err, &e)
			require.Equal(t, tc.wantAt(dir), e.Path, "the loser stands down at the fence: %v", err)
			require.Equal(t, tc.subject, e.Subject)
			require.NoDirExists(t, runPath(dir, 2), "the loser claims nothing")
			require.NoDirExists(t, fencedPath(dir, 2))
			require.Equal(t, landed.Seq, mustStatus(t, dir).Seq, "the winner's record stands")
		})
	}
}
