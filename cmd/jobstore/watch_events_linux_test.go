package main

import (
	"strings"
	"testing"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/clitest"
	"github.com/axqua/jobstore/internal/testdir"
	"github.com/stretchr/testify/require"
)

// With a safety poll of an hour, only file system events (inotify) can
// bring the runner's statuses within the test's time: the watch follows
// each one and ends with the job.
func TestWatch_FollowsARunnerByEventsWithoutPolling(t *testing.T) {
	dir := clitest.Submit(t, testdir.New(t), "j")
	w := startWatch(t, dir, "--interval", "1h")
	w.waitLine(t, "queued")

	run, err := jobstore.Start(dir, jobstore.WithProgressInterval(0))
	require.NoError(t, err)
	defer run.Close()
	for _, msg := range []string{"first", "second", "third"} {
		require.NoError(t, run.Progress(0.5, msg))
		require.Contains(t, w.waitLine(t, msg), "running")
	}
	require.NoError(t, run.Finish(jobstore.Outcome{State: jobstore.Failed, Error: "boom"}))
	code, last := w.wait(t)
	require.Equal(t, exitUnsuccessful, code)
	require.True(t, strings.HasPrefix(last, "job j failed"), last)
}
