//go:build unix

package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/clitest"
	"github.com/axqua/jobstore/cmd/jobstore/internal/jobview"
	"github.com/axqua/jobstore/internal/testdir"
	"github.com/stretchr/testify/require"
)

// A job directory swapped for a link to a directory elsewhere once its job
// has started (moved away within the root, a link at its entry) keeps the
// command's output in the directory the run holds: stdout.log and
// stderr.log never appear at the link's target.
func TestWork_OutputStaysInTheHeldJobDirWhenItIsSwappedForALink(t *testing.T) {
	// The job's supervisor on Linux is this binary (/proc/self/exe), which
	// acts as jobstore with selfEnv set.
	t.Setenv(selfEnv, "1")
	root := testdir.New(t)
	dir := clitest.Submit(t, root, "j")
	run, err := jobstore.Start(dir)
	require.NoError(t, err)
	t.Cleanup(func() { _ = run.Close() })
	outside := testdir.New(t)
	moved := filepath.Join(root, "moved")
	require.NoError(t, os.Rename(string(dir), moved))
	require.NoError(t, os.Symlink(outside, string(dir)))

	wk := &worker{root: root, argv: []string{"sh", "-c", "echo out; echo err >&2"}, grace: time.Second,
		stderr: io.Discard, out: io.Discard, logLimit: defaultLogLimit}
	ctx, cancel := context.WithTimeout(context.Background(), cliTimeout)
	defer cancel()
	end := wk.runJob(ctx, run, func() {})
	require.NoError(t, end.err)
	require.Equal(t, jobstore.Succeeded, end.state)

	require.Empty(t, readTree(t, outside), "output written through the link, outside the root")
	require.Contains(t, readText(t, filepath.Join(moved, jobview.StdoutFile)), "out\n")
	require.Contains(t, readText(t, filepath.Join(moved, jobview.StderrFile)), "err\n")
}
