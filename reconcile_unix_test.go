//go:build unix

package jobstore_test

import (
	"os/exec"
	"strconv"
	"syscall"
	"testing"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReconcile_RunnerKilledBySIGKILLIsLostALiveOneIsNot(t *testing.T) {
	root := tempDir(t)
	var dirs [2]jobstore.JobDir
	var runners [2]*child
	for i := range dirs {
		var err error
		dirs[i], err = jobstore.Submit(root, jobstore.JobSpec{Kind: "test"})
		require.NoError(t, err)
		runners[i] = startRole(t, "runner", dirEnv+"="+string(dirs[i]))
		require.Equal(t, "started "+strconv.Itoa(runners[i].cmd.Process.Pid), runners[i].line(t))
	}
	killed, live := dirs[0], dirs[1]
	prev := readStatus(t, killed)
	require.Equal(t, jobstore.Running, prev.State)

	require.NoError(t, runners[0].cmd.Process.Signal(syscall.SIGKILL))
	err := runners[0].cmd.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	ws, _ := ee.Sys().(syscall.WaitStatus)
	require.True(t, ws.Signaled() && ws.Signal() == syscall.SIGKILL, "the runner died of SIGKILL: %v", err)
	assert.Equal(t, prev, readStatus(t, killed), "a killed runner writes nothing")

	results, err := jobstore.ReconcileAll(root)
	require.NoError(t, err)
	require.Len(t, results, 2)
	changed := map[jobstore.JobDir]bool{}
	for _, r := range results {
		require.NoError(t, r.Err)
		changed[r.Dir] = r.Changed
	}
	assert.True(t, changed[killed], "the killed runner's job is reconciled")
	assert.False(t, changed[live], "the live runner's job is not")
	requireLost(t, killed, prev)
	liveSt := readStatus(t, live)
	assert.Equal(t, jobstore.Running, liveSt.State)
	assert.Equal(t, runners[1].cmd.Process.Pid, liveSt.PID)

	require.NoError(t, runners[1].cmd.Process.Kill())
	_ = runners[1].cmd.Wait()
	ok, err := jobstore.Reconcile(live)
	require.NoError(t, err)
	assert.True(t, ok, "once killed, the second runner's job is lost too")
}
