//go:build unix

package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/clitest"
	"github.com/axqua/jobstore/internal/testdir"
	"github.com/stretchr/testify/require"
)

// interrupt sends SIGINT to a running command, as Ctrl-C does.
func (w *watchProc) interrupt(t *testing.T) {
	t.Helper()
	require.NoError(t, w.cmd.Process.Signal(os.Interrupt))
}

// requireEndedBy checks that a command that has been waited for ended as
// sig ends a process that does not catch it: by the signal itself.
func requireEndedBy(t *testing.T, cmd *exec.Cmd, sig syscall.Signal) {
	t.Helper()
	require.NotNil(t, cmd.ProcessState, "not waited for")
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	require.True(t, ok)
	require.True(t, ws.Signaled(), "the command exited with %d instead of ending by %v", ws.ExitStatus(), sig)
	require.Equal(t, sig, ws.Signal())
}

// list --watch into a pipe: the table once, then a line per change of any
// job (a runner's progress, a job added, a cancel request, the end, a job
// removed, a directory that is not a job), each once, until SIGINT: then a
// last line says it stopped, and it ends by the SIGINT.
func TestListWatch_PipedPrintsALinePerChangeUntilInterrupted(t *testing.T) {
	root := testdir.New(t)
	a := clitest.Submit(t, root, "a")
	w := startLines(t, "list", root, "--watch", "--interval", watchPoll.String())
	w.waitLine(t, "ID")
	require.Regexp(t, `^a\s+render\s+queued\s+-\s+`, w.waitLine(t, "a "))

	run, err := jobstore.Start(a, jobstore.WithProgressInterval(0))
	require.NoError(t, err)
	defer run.Close()
	require.Equal(t, "a  running  -  seq 2", w.waitLine(t, "a  running"))
	require.NoError(t, run.Progress(0.5, "halfway"))
	require.Equal(t, "a  running  50%  seq 3  halfway", w.waitLine(t, "halfway"))

	clitest.Submit(t, root, "b")
	// A rescan may find it between its job.json and its first status.
	require.Equal(t, "b  queued  -  seq 1", w.waitLine(t, "b  queued"))

	requireCode(t, runCLI(t, "cancel", string(a), "--by", "alice"), exitOK)
	require.Equal(t, "a  running, cancel requested  50%  seq 3  halfway", w.waitLine(t, "a  running, cancel requested"))
	select {
	case <-run.Context().Done():
	case <-time.After(lineTimeout):
		t.Fatal("the runner was not told of the request")
	}
	require.NoError(t, run.Finish(jobstore.Outcome{State: jobstore.Cancelled, Message: "stopped"}))
	require.Equal(t, "a  cancelled, on request  50%  seq 4  stopped", w.waitLine(t, "a  cancelled"))

	require.NoError(t, os.RemoveAll(filepath.Join(root, "b")))
	w.waitLine(t, "b  removed")

	// A directory that stays without job.json is shown as list shows it,
	// once it is clearly not a job being submitted.
	require.NoError(t, os.Mkdir(filepath.Join(root, "c"), 0o755))
	require.Contains(t, w.waitLine(t, "c  "), "c  unreadable: ")

	w.interrupt(t)
	_, last := w.wait(t)
	requireEndedBy(t, w.cmd, syscall.SIGINT)
	require.Equal(t, "stopped (SIGINT) watching "+root, last)
	require.Empty(t, w.stderr.String())
	seen := map[string]bool{}
	for _, l := range w.seen {
		require.NotContains(t, l, "b  unreadable", "a job being submitted or removed is not shown half-made:\n%s", strings.Join(w.seen, "\n"))
		require.False(t, seen[l], "line %q printed twice:\n%s", l, strings.Join(w.seen, "\n"))
		seen[l] = true
	}
}

func TestListWatch_JSONPrintsAnObjectPerChangeOfTheFilteredJobs(t *testing.T) {
	root := testdir.New(t)
	a := clitest.Submit(t, root, "a")
	_, err := jobstore.Submit(root, jobstore.JobSpec{ID: "b-other", Kind: "encode"})
	require.NoError(t, err)
	w := startLines(t, "list", root, "--watch", "--json", "--kind", "render", "--interval", watchPoll.String())
	first := w.waitLine(t, `"job_id":"a"`)
	var ev struct {
		Event  string              `json:"event"`
		Status *jobstore.JobStatus `json:"status"`
	}
	require.NoError(t, json.Unmarshal([]byte(first), &ev))
	require.Equal(t, "job", ev.Event)
	require.Equal(t, jobstore.Queued, ev.Status.State)
	w.waitLine(t, `{"event":"synced"}`)

	run, err := jobstore.Start(a, jobstore.WithProgressInterval(0))
	require.NoError(t, err)
	defer run.Close()
	require.NoError(t, run.Progress(0.5, "halfway"))
	line := w.waitLine(t, `"halfway"`)
	require.NoError(t, json.Unmarshal([]byte(line), &ev))
	require.Equal(t, uint64(3), ev.Status.Seq)
	require.NoError(t, run.Finish(jobstore.Outcome{State: jobstore.Succeeded}))
	w.waitLine(t, `"state":"succeeded"`)

	w.interrupt(t)
	_, last := w.wait(t)
	require.JSONEq(t, `{"event":"stopped","signal":"SIGINT"}`, last)
	for _, l := range w.seen {
		require.NotContains(t, l, "b-other", "a job the filter leaves out")
		require.True(t, json.Valid([]byte(l)), "not one JSON object a line: %q", l)
	}
}

// list --watch of a root with no job yet prints the (empty) table at once,
// then each job submitted later.
func TestListWatch_EmptyRootShowsLaterJobs(t *testing.T) {
	root := testdir.New(t)
	require.NoError(t, os.Mkdir(filepath.Join(root, ".submit"), 0o755))
	w := startLines(t, "list", root, "--watch", "--interval", watchPoll.String())
	require.Equal(t, "no jobs under "+root, w.waitLine(t, "no jobs"))
	clitest.Submit(t, root, "late")
	require.Equal(t, "late  queued  -  seq 1", w.waitLine(t, "late"))
	w.interrupt(t)
	w.wait(t)
	requireEndedBy(t, w.cmd, syscall.SIGINT)
}
