//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/clitest"
	"github.com/axqua/jobstore/cmd/jobstore/internal/jobview"
	"github.com/axqua/jobstore/cmd/jobstore/internal/supervise"
	"github.com/axqua/jobstore/internal/testdir"
	"github.com/stretchr/testify/require"
)

// heartbeatPeriod is how often a tree job's grandchild appends to its
// heartbeat file.
const heartbeatPeriod = 50 * time.Millisecond

// treeJob is a job's command run as "sh job.sh": it starts a grandchild
// that ignores SIGTERM (its own sleeps inherit that) and appends a line to
// a heartbeat file outside the root every heartbeatPeriod, waits for the
// first line, then does what its mode says.
type treeJob struct {
	script    string // job.sh
	heartbeat string // the grandchild's heartbeat file
	pidFile   string // the grandchild's pid
	cmdFile   string // the command's pid
	env       []string
}

// Modes of a tree job's command, once its grandchild beats.
const (
	treeHold = "exec sleep 600" // runs until stopped; a SIGTERM ends it
	treeExit = "exit 0"         // exits at once, leaving the grandchild running
)

// newTreeJob writes job.sh for mode in a directory of its own; ignoreTerm
// says whether the grandchild ignores SIGTERM.
func newTreeJob(t *testing.T, mode string, ignoreTerm bool) *treeJob {
	t.Helper()
	dir := testdir.New(t)
	j := &treeJob{script: filepath.Join(dir, "job.sh"), heartbeat: filepath.Join(dir, "heartbeat"), pidFile: filepath.Join(dir, "grandchild.pid"), cmdFile: filepath.Join(dir, "command.pid")}
	trap := ""
	if ignoreTerm {
		trap = "trap '' TERM; "
	}
	script := "echo $$ > \"$TREE_CMD\".tmp && mv \"$TREE_CMD\".tmp \"$TREE_CMD\"\n" +
		"( " + trap + "while :; do echo beat >> \"$TREE_HEARTBEAT\"; sleep " + strconv.FormatFloat(heartbeatPeriod.Seconds(), 'f', -1, 64) + "; done ) &\n" +
		"echo $! > \"$TREE_PID\".tmp && mv \"$TREE_PID\".tmp \"$TREE_PID\"\n" +
		"while [ ! -s \"$TREE_HEARTBEAT\" ]; do sleep 0.01; done\n" +
		mode + "\n"
	require.NoError(t, os.WriteFile(j.script, []byte(script), 0o644))
	j.env = []string{"TREE_HEARTBEAT=" + j.heartbeat, "TREE_PID=" + j.pidFile, "TREE_CMD=" + j.cmdFile}
	return j
}

// start starts "jobstore work ARGS -- sh job.sh" and waits for the
// grandchild's heartbeat; it returns the worker and the grandchild's pid
// (killed at cleanup, should the test fail).
func (j *treeJob) start(t *testing.T, args ...string) (*workerProc, int) {
	t.Helper()
	w := startBackground(t, j.env, append(append([]string{"work"}, args...), "--", "sh", j.script)...)
	clitest.WaitUntil(t, "the grandchild to beat", func() bool { return jobview.Exists(j.pidFile) && j.size() > 0 })
	pid := readPID(t, j.pidFile)
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	return w, pid
}

// size is the heartbeat file's size: it grows while the grandchild lives.
func (j *treeJob) size() int64 {
	fi, err := os.Stat(j.heartbeat)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// requireStill fails unless the heartbeat stays as it is for a few of its
// periods: nothing of the tree writes any more.
func (j *treeJob) requireStill(t *testing.T) {
	t.Helper()
	requireFileStill(t, j.heartbeat, "the grandchild's heartbeat goes on")
}

// requireFileStill fails with msg unless the heartbeat file at path stays
// as it is for a few heartbeatPeriods.
func requireFileStill(t *testing.T, path, msg string) {
	t.Helper()
	size := func() int64 {
		fi, err := os.Stat(path)
		if err != nil {
			return 0
		}
		return fi.Size()
	}
	before := size()
	time.Sleep(4 * heartbeatPeriod)
	require.Equal(t, before, size(), msg)
}

// A cancel ends the command's whole tree before the job says cancelled:
// the command exits on SIGTERM, its grandchild ignores it and gets SIGKILL
// after the grace, and only then is the job recorded.
func TestWork_CancelEndsTheWholeTreeBeforeTheRecord(t *testing.T) {
	root := testdir.New(t)
	dir := submitKind(t, root, "j", "k", "")
	j := newTreeJob(t, treeHold, true)
	w, gc := j.start(t, root, "--grace", "300ms")
	cmd := readPID(t, j.cmdFile)
	require.NoError(t, jobstore.RequestCancel(dir, jobstore.CancelRequest{RequestedBy: "tester"}))

	st := waitEnded(t, dir)
	require.Equal(t, jobstore.Cancelled, st.State)
	require.True(t, gone(gc), "the job says cancelled while the grandchild (pid %d) still runs; message: %s", gc, st.Message)
	require.True(t, gone(cmd), "the job says cancelled while the command (pid %d) still runs", cmd)
	j.requireStill(t)
	require.Equal(t, 128+int(syscall.SIGTERM), *st.ExitCode)
	require.Regexp(t, `(\d+ )?process(es)? the command left running got SIGTERM, and (\d+ )?(those )?still running after the grace of 300ms got SIGKILL`, st.Message)

	require.NoError(t, w.cmd.Process.Signal(os.Interrupt))
	w.wait(t)
}

// A command that ends (here with success) and leaves a background child
// running: the child is stopped before the job is recorded, and the
// record says so, whether SIGTERM ends it or SIGKILL has to.
func TestWork_CommandThatExitsLeavingAChildIsRecordedOnceItIsGone(t *testing.T) {
	for _, tc := range []struct {
		name       string
		ignoreTerm bool
		grace      string
		says       string
	}{
		{"SIGTERM ends it", false, "1h", `^(\d+ )?process(es)? the command left running got SIGTERM$`},
		{"SIGTERM ignored: SIGKILL after the grace", true, "300ms", `^(\d+ )?process(es)? the command left running got SIGTERM, and (\d+ )?(those )?still running after the grace of 300ms got SIGKILL$`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := testdir.New(t)
			dir := submitKind(t, root, "j", "k", "")
			j := newTreeJob(t, treeExit, tc.ignoreTerm)
			w, gc := j.start(t, root, "--grace", tc.grace, "--until-empty")
			r := w.wait(t)
			requireCode(t, r, exitOK)
			st := status(t, dir)
			require.Equal(t, jobstore.Succeeded, st.State, "%s\n%s", r.stdout, r.stderr)
			require.True(t, gone(gc), "the job says succeeded while the child the command left (pid %d) still runs", gc)
			j.requireStill(t)
			require.Regexp(t, tc.says, st.Message)
			require.Contains(t, r.stdout, "the command left running", "the end line says what was stopped")
		})
	}
}

// The command's output is read until the last process holding it is gone,
// not for a fixed time after the command exits: a child the command left
// behind writes its last words longer than supervise.OutputWaitDelay after the
// command's exit (once it gets SIGTERM), and they are kept.
func TestWork_OutputIsReadUntilTheTreeIsGone(t *testing.T) {
	root := testdir.New(t)
	dir := submitKind(t, root, "j", "k", "")
	work := testdir.New(t)
	script, ready := filepath.Join(work, "job.sh"), filepath.Join(work, "ready")
	late := strconv.FormatFloat((supervise.OutputWaitDelay + 500*time.Millisecond).Seconds(), 'f', -1, 64)
	require.NoError(t, os.WriteFile(script, []byte(
		"( trap 'sleep "+late+"; echo last words; exit 0' TERM; : > \"$READY\"; while :; do sleep 0.05; done ) &\n"+
			"while [ ! -e \"$READY\" ]; do sleep 0.01; done\n"+
			"echo first words\n"), 0o644))
	r := runCLIEnv(t, []string{"READY=" + ready}, "work", root, "--grace", "1h", "--until-empty", "--", "sh", script)
	requireCode(t, r, exitOK)
	require.Equal(t, jobstore.Succeeded, status(t, dir).State, "%s\n%s", r.stdout, r.stderr)
	require.Equal(t, "first words\nlast words\n", commandOutput(t, filepath.Join(string(dir), jobview.StdoutFile)))
}
