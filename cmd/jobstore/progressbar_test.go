package main

import (
	"strings"
	"testing"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/clitest"
	"github.com/axqua/jobstore/cmd/jobstore/internal/jobview"
	"github.com/axqua/jobstore/cmd/jobstore/internal/termtext"
	"github.com/axqua/jobstore/internal/testdir"
	"github.com/stretchr/testify/require"
)

// An unknown progress is drawn as an empty bar that says so, at every
// width: never a row of '?', which reads as text the terminal could not
// show; a known one fills the bar with '#'.
func TestProgressBar_UnknownReadsAsUnknown(t *testing.T) {
	for width := 1; width <= 30; width++ {
		bar := jobview.ProgressBarN(nil, width)
		require.Equal(t, width+2, termtext.Cells(bar), "%q", bar)
		require.True(t, strings.HasPrefix(bar, "[") && strings.HasSuffix(bar, "]"), "%q", bar)
		require.NotContains(t, bar, "??", "%q", bar)
		require.NotContains(t, bar, "#", "%q", bar)
		if width >= len("unknown") {
			require.Contains(t, bar, "unknown", "%q", bar)
		}
	}
	half := 0.5
	require.Equal(t, "[#####-----]", jobview.ProgressBarN(&half, 10))
}

// Each command that draws a bar draws an unknown progress the same way:
// watch's lines (a pipe), and its redrawn line on a terminal at each width.
func TestProgressBar_UnknownIsTheSameInEveryCommand(t *testing.T) {
	dir := clitest.Submit(t, testdir.New(t), "j") // queued: no progress yet
	w := startWatch(t, dir)
	line := w.waitLine(t, "queued")
	require.Contains(t, line, jobview.ProgressBar(nil))
	require.NotContains(t, line, "??")
	w.cancel()

	st := &jobstore.JobStatus{State: jobstore.Queued, Seq: 1}
	for _, cols := range []int{30, 50, 80} {
		line := fitStatusLine(st, cols)
		require.NotContains(t, line, "??", "%d columns: %q", cols, line)
		if strings.Contains(line, "[") {
			require.Contains(t, line, "unknown", "%d columns: %q", cols, line)
		}
	}
}
