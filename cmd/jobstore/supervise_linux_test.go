package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/clitest"
	"github.com/axqua/jobstore/cmd/jobstore/internal/jobview"
	"github.com/axqua/jobstore/internal/testdir"
	"github.com/stretchr/testify/require"
)

// treeGoneTimeout is how long a tree test gives the processes of a job to
// be gone once the worker died: "at once" for a supervisor that is told by
// its pipe, with room for a loaded machine.
const treeGoneTimeout = time.Second

// waitGone waits up to limit for pid to be gone, and reports whether it is.
func waitGone(pid int, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for !gone(pid) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

// A worker killed with SIGKILL takes every process its command started
// with it, not only the command: a grandchild that ignores SIGTERM stops
// beating at once.
func TestWork_KilledWorkerTakesTheCommandsWholeTree(t *testing.T) {
	root := testdir.New(t)
	submitKind(t, root, "j", "k", "")
	j := newTreeJob(t, treeHold, true)
	w, gc := j.start(t, root)
	cmd := readPID(t, j.cmdFile)
	require.NoError(t, w.cmd.Process.Kill())
	<-w.done
	require.True(t, waitGone(gc, treeGoneTimeout), "the grandchild (pid %d) outlived the killed worker by %v", gc, treeGoneTimeout)
	require.True(t, waitGone(cmd, treeGoneTimeout), "the command (pid %d) outlived the killed worker by %v", cmd, treeGoneTimeout)
	j.requireStill(t)
}

// A worker that stops renewing its lease (SIGSTOP) does not leave its
// command working past the moment another host may take the job over: its
// supervisor stops the tree well before a whole lease passes unrenewed, and
// the worker, once it runs again, says so in the record.
func TestWork_StoppedWorkersTreeEndsBeforeItsLeaseCouldBeJudgedGone(t *testing.T) {
	const lease = 3 * time.Second
	root := testdir.New(t)
	dir := submitKind(t, root, "j", "k", "")
	j := newTreeJob(t, treeHold, true)
	w, gc := j.start(t, root, "--lease", lease.String())
	cmd := readPID(t, j.cmdFile)
	leaseFile := filepath.Join(string(dir), ".run-1", "lease")
	clitest.WaitUntil(t, "the first renewal", func() bool { return jobview.Exists(leaseFile) })

	require.NoError(t, w.cmd.Process.Signal(syscall.SIGSTOP))
	stopped := true
	t.Cleanup(func() {
		if stopped {
			_ = w.cmd.Process.Signal(syscall.SIGCONT)
		}
	})
	require.True(t, waitGone(gc, 2*lease), "the grandchild (pid %d) still runs %v after its worker stopped", gc, 2*lease)
	require.True(t, gone(cmd), "the command (pid %d) outlived its grandchild", cmd)
	j.requireStill(t)
	lastBeat, lastRenewal := mtime(t, j.heartbeat), mtime(t, leaseFile)
	require.True(t, lastBeat.Before(lastRenewal.Add(lease)),
		"the tree ran until %v after the last renewal, when the lease (%v) could be judged gone", lastBeat.Sub(lastRenewal), lease)
	require.Equal(t, jobstore.Running, status(t, dir).State, "the stopped worker wrote")

	require.NoError(t, w.cmd.Process.Signal(syscall.SIGCONT))
	stopped = false
	st := waitEnded(t, dir)
	require.Equal(t, jobstore.Failed, st.State)
	require.Contains(t, st.Error, "stopped by the supervisor: the worker did not renew its lease for")
	require.Contains(t, st.Error, "the lease is 3s")
	require.NoError(t, w.cmd.Process.Signal(os.Interrupt))
	w.wait(t)
}

func mtime(t *testing.T, path string) time.Time {
	t.Helper()
	fi, err := os.Stat(path)
	require.NoError(t, err)
	return fi.ModTime()
}
