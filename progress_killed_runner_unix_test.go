//go:build unix

package jobstore_test

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pendingRunnerRole starts the job in $JOBSTORE_TEST_DIR with a progress
// interval no test outlasts, writes a progress with Flush, reports another
// that stays pending, says "ready" and waits to be killed.
const pendingRunnerRole = "pendingrunner"

func init() { roles[pendingRunnerRole] = pendingRunner }

func pendingRunner() int {
	r, err := jobstore.Start(jobstore.JobDir(os.Getenv(dirEnv)), jobstore.WithProgressInterval(time.Hour))
	if err != nil {
		return exitCode(err)
	}
	if err := r.Progress(0.3, "written"); err != nil {
		return exitCode(err)
	}
	if err := r.Flush(); err != nil {
		return exitCode(err)
	}
	if err := r.Progress(0.6, "pending"); err != nil {
		return exitCode(err)
	}
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin) // until killed
	return 1
}

// TestRun_SIGKILLLosesOnlyTheProgressNotYetWritten: what docs/guarantees.md
// says a killed runner loses. The progress written stays, the progress
// still pending in the runner's memory is gone, the lock is free, and
// Reconcile marks the job lost with the last progress written.
func TestRun_SIGKILLLosesOnlyTheProgressNotYetWritten(t *testing.T) {
	dir, err := jobstore.Submit(tempDir(t), jobstore.JobSpec{Kind: "test"})
	require.NoError(t, err)
	runner := startRole(t, pendingRunnerRole, dirEnv+"="+string(dir))
	require.Equal(t, "ready", runner.line(t))
	before := readStatus(t, dir)
	require.NotNil(t, before.Progress)
	require.Equal(t, 0.3, *before.Progress)

	require.NoError(t, runner.cmd.Process.Signal(syscall.SIGKILL))
	err = runner.cmd.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	ws, _ := ee.Sys().(syscall.WaitStatus)
	require.True(t, ws.Signaled() && ws.Signal() == syscall.SIGKILL, "the runner died of SIGKILL: %v", err)

	after := readStatus(t, dir)
	assert.Equal(t, before, after, "what was written stays; what was pending is lost")
	assert.Equal(t, "written", after.Message)
	lk, err := jobstore.LockJob(dir)
	require.NoError(t, err, "the kernel released the runner's lock")
	require.NoError(t, lk.Unlock())

	changed, err := jobstore.Reconcile(dir)
	require.NoError(t, err)
	require.True(t, changed)
	lost := readStatus(t, dir)
	assert.Equal(t, jobstore.Lost, lost.State)
	require.NotNil(t, lost.Progress)
	assert.Equal(t, 0.3, *lost.Progress, "the last progress written")
}
