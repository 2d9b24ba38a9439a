package jobstore_test

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/require"
)

// pauseLease is the lease of the paused runners below: short, so that a
// pause past it takes seconds.
const pauseLease = 900 * time.Millisecond

// A runner paused past its lease on one host (SIGSTOP: a debugger, a frozen
// cgroup, a laptop's sleep) goes on when it resumes: nobody took its job
// over, so nobody may call it gone, and it must not call itself gone
// either. Reconcile, looking all along, leaves it alone; when the runner
// resumes it re-establishes its claim as the next attempt and finishes.
func TestRun_PausedPastItsLeaseOnOneHostGoesOn(t *testing.T) {
	dir, err := jobstore.Submit(tempDir(t), jobstore.JobSpec{ID: "j", Kind: "k"})
	require.NoError(t, err)
	r := startRole(t, twoHostRunnerRole, "JOB="+string(dir), "EVERY=50ms", "LEASE="+pauseLease.String())
	require.Equal(t, "started", r.line(t))
	require.NoError(t, r.cmd.Process.Signal(syscall.SIGSTOP))
	t.Cleanup(func() { _ = r.cmd.Process.Signal(syscall.SIGCONT) })
	for end := time.Now().Add(3 * pauseLease); time.Now().Before(end); time.Sleep(pauseLease / 5) {
		changed, err := jobstore.Reconcile(dir)
		require.NoError(t, err)
		require.False(t, changed, "a paused runner on this host is alive")
	}
	require.NoError(t, r.cmd.Process.Signal(syscall.SIGCONT))
	_, err = r.stdin.Write([]byte("finish\n"))
	require.NoError(t, err)
	require.Equal(t, "finished", r.line(t), "the runner must go on after its pause")
	require.NoError(t, r.cmd.Wait(), "the runner must exit cleanly (under -race: without a race reported)")
	st, err := jobstore.ReadStatus(dir)
	require.NoError(t, err)
	require.Equal(t, jobstore.Succeeded, st.State)
	require.EqualValues(t, 2, st.Attempt, "the runner went on as the next attempt")
	require.FileExists(t, filepath.Join(jobstore.FencedDirPath(dir, 1), "fenced-by"), "its own fence ended attempt 1")
}

// A runner paused inside Start past its lease, between its claim and its
// first write (the renewer already running): when it resumes, the
// renewer's word of the lapse waits for Start's write under the Run's write
// lock instead of racing it (the race detector watches this test in CI),
// and Start re-establishes its claim as the next attempt and goes on.
func TestStart_PausedBetweenItsClaimAndItsFirstWriteGoesOn(t *testing.T) {
	dir, err := jobstore.Submit(tempDir(t), jobstore.JobSpec{ID: "j", Kind: "k"})
	require.NoError(t, err)
	// The child waits in Start long enough that, after the pause, its
	// renewer sees the lapse while Start has not written yet.
	r := startRole(t, twoHostRunnerRole, "JOB="+string(dir), "EVERY=50ms", "LEASE="+pauseLease.String(),
		"WAIT_IN_START="+(4*pauseLease).String())
	require.Equal(t, "begun", r.line(t))
	require.NoError(t, r.cmd.Process.Signal(syscall.SIGSTOP))
	t.Cleanup(func() { _ = r.cmd.Process.Signal(syscall.SIGCONT) })
	time.Sleep(2 * pauseLease)
	require.NoError(t, r.cmd.Process.Signal(syscall.SIGCONT))
	require.Equal(t, "started", r.line(t), "Start must go on after its pause")
	_, err = r.stdin.Write([]byte("finish\n"))
	require.NoError(t, err)
	require.Equal(t, "finished", r.line(t))
	require.NoError(t, r.cmd.Wait(), "the runner must exit cleanly (under -race: without a race reported)")
	st, err := jobstore.ReadStatus(dir)
	require.NoError(t, err)
	require.Equal(t, jobstore.Succeeded, st.State)
	require.EqualValues(t, 2, st.Attempt, "Start went on as the next attempt")
}
