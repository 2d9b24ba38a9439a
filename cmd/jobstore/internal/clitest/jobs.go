package clitest

import (
	"testing"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/require"
)

// Submit submits a job with the library, as a runner's client would.
func Submit(t *testing.T, root, id string) jobstore.JobDir {
	t.Helper()
	dir, err := jobstore.Submit(root, jobstore.JobSpec{ID: id, Kind: "render", SubmittedBy: "tester"})
	require.NoError(t, err)
	return dir
}

// RunJob submits a job and runs it to the outcome with the runner handle.
func RunJob(t *testing.T, root, id string, o jobstore.Outcome) jobstore.JobDir {
	t.Helper()
	dir := Submit(t, root, id)
	run, err := jobstore.Start(dir, jobstore.WithProgressInterval(0)) // progress its own write: the goldens' seq
	require.NoError(t, err)
	defer run.Close()
	require.NoError(t, run.Progress(0.5, "halfway"))
	require.NoError(t, run.Finish(o))
	return dir
}
