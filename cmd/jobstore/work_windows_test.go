package main

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/clitest"
	"github.com/axqua/jobstore/cmd/jobstore/internal/jobview"
	"github.com/axqua/jobstore/internal/testdir"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/windows"
)

// alive reports whether the process pid is still running.
func alive(pid int) bool {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION|windows.SYNCHRONIZE, false, uint32(pid))
	if err != nil {
		return false // gone (or never seen)
	}
	defer windows.CloseHandle(h)
	ev, err := windows.WaitForSingleObject(h, 0)
	return err == nil && ev == uint32(windows.WAIT_TIMEOUT)
}

// A cancel request ends the command and the process it started: a
// CTRL_BREAK_EVENT it may not receive (no shared console), then the job
// object terminated after the grace. The job is cancelled.
func TestWork_CancelEndsTheCommandAndItsJobObject(t *testing.T) {
	root := testdir.New(t)
	dir := submitKind(t, root, "j", "k", "")
	w := startWorker(t, "hold", []string{grandchildEnv + "=1"}, root, "--grace", "300ms", "--until-empty")
	gc := filepath.Join(string(dir), grandchildFile)
	clitest.WaitUntil(t, "the command and its child to run", func() bool {
		return jobview.Exists(filepath.Join(string(dir), pidFile)) && jobview.Exists(gc)
	})
	pid, gcPID := readPID(t, filepath.Join(string(dir), pidFile)), readPID(t, gc)
	t.Cleanup(func() { // should the test fail
		if h, err := windows.OpenProcess(windows.PROCESS_TERMINATE, false, uint32(gcPID)); err == nil {
			_ = windows.TerminateProcess(h, 1)
			windows.CloseHandle(h)
		}
	})
	require.NoError(t, jobstore.RequestCancel(dir, jobstore.CancelRequest{RequestedBy: "tester"}))
	ctx, cancel := context.WithTimeout(context.Background(), cliTimeout)
	defer cancel()
	st, err := jobstore.Wait(ctx, dir)
	require.NoError(t, err)
	require.Equal(t, jobstore.Cancelled, st.State)
	require.Contains(t, st.Message, `cancel requested by "tester"`)
	t.Log(st.Message)
	clitest.WaitUntil(t, "the command and its child to be gone", func() bool { return !alive(pid) && !alive(gcPID) })
	requireCode(t, w.wait(t), exitUnsuccessful) // --until-empty ran a job that did not succeed
}

// A command that exits leaving a process running: what is left in its job
// object is ended before the job is recorded, and the record says so.
func TestWork_CommandThatExitsLeavingAChildIsRecordedOnceItIsGone(t *testing.T) {
	root := testdir.New(t)
	dir := submitKind(t, root, "j", "k", "")
	w := startWorker(t, "hold", []string{grandchildEnv + "=1"}, root, "--grace", "300ms", "--until-empty")
	gc := filepath.Join(string(dir), grandchildFile)
	clitest.WaitUntil(t, "the command's child to run", func() bool { return jobview.Exists(gc) })
	gcPID := readPID(t, gc)
	writeFileT(t, filepath.Join(string(dir), releaseFile), "") // the command ends; its child does not
	r := w.wait(t)
	requireCode(t, r, exitOK)
	st := status(t, dir)
	require.Equal(t, jobstore.Succeeded, st.State, "%s\n%s", r.stdout, r.stderr)
	require.False(t, alive(gcPID), "the job says succeeded while the child the command left (pid %d) still runs", gcPID)
	require.Contains(t, st.Message, "1 process the command left running got CTRL_BREAK_EVENT")
}
