package jobstore_test

import (
	"os"
	"testing"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/require"
)

// A Run's writes create their temp file through the attempt directory it
// holds open since its claim. After a fence that directory is .fenced-N:
// the next write fails with ErrNotOwner at the rename, the fencer's record
// stands, and the temp file is removed from .fenced-N too.
func TestRun_FencedRunLeavesNoTempFileInItsFencedDirectory(t *testing.T) {
	for _, write := range []struct {
		name string
		call func(*jobstore.Run) error
	}{
		{"progress (NoSync)", func(r *jobstore.Run) error { return r.Progress(0.5, "half") }},
		{"set message (durable)", func(r *jobstore.Run) error { return r.SetMessage("still here") }},
		{"finish (durable)", func(r *jobstore.Run) error {
			return r.Finish(jobstore.Outcome{State: jobstore.Succeeded})
		}},
	} {
		t.Run(write.name, func(t *testing.T) {
			dir, err := jobstore.Submit(tempDir(t), jobstore.JobSpec{ID: "j", Kind: "k"})
			require.NoError(t, err)
			run, err := jobstore.Start(dir, jobstore.WithProgressInterval(0))
			require.NoError(t, err)
			t.Cleanup(func() { _ = run.Close() })

			won, err := jobstore.FenceAttempt(dir, 1)
			require.NoError(t, err)
			require.True(t, won)
			now := jobstore.Now()
			require.NoError(t, jobstore.WriteStatus(dir, jobstore.JobStatus{State: jobstore.Lost, Seq: 5, Attempt: 1, FinishedAt: &now}))
			before, err := os.ReadFile(dir.StatusPath())
			require.NoError(t, err)

			require.ErrorIs(t, write.call(run), jobstore.ErrNotOwner)
			after, err := os.ReadFile(dir.StatusPath())
			require.NoError(t, err)
			require.Equal(t, string(before), string(after), "the fencer's record must stand")
			requireNoTempFiles(t, dir, "a fenced write must remove its temp file wherever it made it")
			require.NoDirExists(t, jobstore.RunDirPath(dir, 1), "a fenced write must not revive .run-1")
		})
	}
}
