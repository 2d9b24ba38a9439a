package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/clitest"
	"github.com/axqua/jobstore/cmd/jobstore/internal/jobview"
	"github.com/axqua/jobstore/internal/testdir"
	"github.com/stretchr/testify/require"
)

// appendLog appends text to a log of dir.
func appendLog(t *testing.T, dir jobstore.JobDir, name, text string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(string(dir), name), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	require.NoError(t, err)
	_, err = f.WriteString(text)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

func TestLogs_PrintsTheKeptOutputBytesUnchanged(t *testing.T) {
	root := testdir.New(t)
	dir := clitest.Submit(t, root, "a")
	out := "line 1\n\x1b[31mred\x1b[0m\nno newline at the end"
	appendLog(t, dir, jobview.StdoutFile, out)
	appendLog(t, dir, jobview.StderrFile, "warning\n")
	r := runCLI(t, "logs", string(dir))
	requireCode(t, r, exitOK)
	require.Equal(t, out, r.stdout)
	r = runCLI(t, "logs", string(dir), "--stderr")
	requireCode(t, r, exitOK)
	require.Equal(t, "warning\n", r.stdout)

	// No log yet, not a job, a log that is a FIFO: exit 3 with a reason.
	queued := clitest.Submit(t, root, "b")
	r = runCLI(t, "logs", string(queued))
	requireCode(t, r, exitRuntime)
	require.Contains(t, r.stderr, "no such log")
	r = runCLI(t, "logs", filepath.Join(root, "nope"))
	requireCode(t, r, exitRuntime)
	if err := clitest.Mkfifo(filepath.Join(string(queued), jobview.StderrFile)); err == nil {
		r = runCLI(t, "logs", string(queued), "--stderr")
		requireCode(t, r, exitRuntime)
		require.Contains(t, r.stderr, "not a regular file")
	}
}

func TestLogs_FollowPrintsWhatIsAppendedUntilTheJobEnds(t *testing.T) {
	root := testdir.New(t)
	dir := clitest.Submit(t, root, "a") // queued: no log yet, which --follow waits for
	ctx, cancel := context.WithTimeout(context.Background(), cliTimeout)
	defer cancel()
	cmd := jobstoreCmd(ctx, nil, "logs", string(dir), "--follow", "--interval", "20ms")
	var stdout, stderr clitest.SyncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Start())

	run, err := jobstore.Start(dir)
	require.NoError(t, err)
	appendLog(t, dir, jobview.StdoutFile, "first\n")
	clitest.WaitUntil(t, "the first line is printed", func() bool { return strings.Contains(stdout.String(), "first\n") })
	appendLog(t, dir, jobview.StdoutFile, "second\n")
	clitest.WaitUntil(t, "the second line is printed", func() bool { return strings.Contains(stdout.String(), "second\n") })
	appendLog(t, dir, jobview.StdoutFile, "last\n")
	require.NoError(t, run.Finish(jobstore.Outcome{State: jobstore.Succeeded}))
	require.NoError(t, run.Close())
	require.NoError(t, cmd.Wait(), "stderr: %s", stderr.String())
	require.Equal(t, "first\nsecond\nlast\n", stdout.String())
}

func TestShow_FailedJobEndsWithTheLastLinesOfStderr(t *testing.T) {
	root := testdir.New(t)
	dir := clitest.RunJob(t, root, "a-failed", jobstore.Outcome{State: jobstore.Failed, Error: "exit 3"})
	var b bytes.Buffer
	for i := 1; i <= 30; i++ {
		b.WriteString("error line " + string(rune('A'+i-1)) + "\n")
	}
	b.WriteString("\x1b]0;owned\x07 the end\n")
	appendLog(t, dir, jobview.StderrFile, b.String())
	r := runCLI(t, "show", string(dir))
	requireCode(t, r, exitOK)
	require.Contains(t, r.stdout, "last 10 lines of stderr.log")
	require.Contains(t, r.stdout, "  error line ^\n")  // the 30th
	require.NotContains(t, r.stdout, "error line T\n") // the 20th: not among the last 10
	require.Contains(t, r.stdout, `\x1b]0;owned\a the end`)
	require.NotContains(t, r.stdout, "\x1b")

	ok := clitest.RunJob(t, root, "b-done", jobstore.Outcome{State: jobstore.Succeeded})
	appendLog(t, ok, jobview.StderrFile, "a warning\n")
	r = runCLI(t, "show", string(ok))
	requireCode(t, r, exitOK)
	require.NotContains(t, r.stdout, jobview.StderrFile+" (")
	require.NotContains(t, r.stdout, "a warning")
}
