package jobstore_test

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/internal/prereq"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Timing of the delayed-lock test: the child's flock(2) is held back by
// flockDelay (strace fault injection); the runner finishes settle after the
// child said it is about to read the status, well within the delay.
const (
	flockDelay = time.Second
	settle     = 300 * time.Millisecond
)

// TestReconcile_RunnerFinishingBeforeTheLockIsNotMarkedLost: the reconciler
// reads running, then (its flock delayed by strace) the runner finishes and
// releases the lock, then the reconciler gets the lock. It must read the
// status again under the lock and leave the finished job alone.
func TestReconcile_RunnerFinishingBeforeTheLockIsNotMarkedLost(t *testing.T) {
	strace, err := exec.LookPath("strace")
	if err != nil {
		prereq.Skip(t, "strace", "strace is not installed (apt-get install strace): it delays the reconciler's flock")
	}
	dir, r := startJob(t)
	c := childCommand(t, "reconciler", dirEnv+"="+string(dir))
	c.Args = append([]string{"strace", "-f", "-qq", "-o", os.DevNull, "-e", "trace=flock",
		"-e", "inject=flock:delay_enter=" + strconv.FormatInt(flockDelay.Microseconds(), 10)}, c.Args...)
	c.Path = strace
	stdout, err := c.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, c.Start())
	t.Cleanup(func() { _ = c.Process.Kill(); _ = c.Wait() })
	rc := &child{cmd: c, out: bufio.NewReader(stdout)}

	require.Equal(t, "reading", rc.line(t))
	time.Sleep(settle) // the child reads running and blocks in its delayed flock
	require.NoError(t, r.Finish(jobstore.Outcome{State: jobstore.Succeeded}))
	final := readStatus(t, dir)
	require.NoError(t, r.Close())

	assert.Equal(t, "changed=false err=<nil>", rc.line(t))
	require.NoError(t, c.Wait())
	assert.Equal(t, final, readStatus(t, dir), "the finished status is not overwritten")
}
