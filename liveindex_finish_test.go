package jobstore_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/require"
)

// A job leaves the live index as it finishes: a worker's view then has no
// entry to keep for it, and a root run by Start and Finish alone keeps no
// entry per finished job. A failed attempt with attempts left queues the
// job again and leaves the entry, as does a Retry that put the job back
// before the entry was removed.
func TestFinish_TakesTheJobOutOfTheLiveIndex(t *testing.T) {
	for _, tc := range []struct {
		name     string
		attempts int
		state    jobstore.State
		live     bool
	}{
		{"succeeded", 0, jobstore.Succeeded, false},
		{"failed", 0, jobstore.Failed, false},
		{"cancelled", 0, jobstore.Cancelled, false},
		{"failed with attempts left: queued again", 2, jobstore.Failed, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := tempDir(t)
			dir, err := jobstore.Submit(root, jobstore.JobSpec{ID: "j", Kind: "k", MaxAttempts: tc.attempts})
			require.NoError(t, err)
			entry := filepath.Join(root, jobstore.LiveDir, "j")
			require.DirExists(t, entry, "Submit makes the entry")
			run, err := jobstore.Start(dir)
			require.NoError(t, err)
			t.Cleanup(func() { _ = run.Close() })
			require.NoError(t, run.Finish(jobstore.Outcome{State: tc.state}))
			_, err = os.Lstat(entry)
			if tc.live {
				require.NoError(t, err, "a job queued again keeps its entry")
				return
			}
			require.ErrorIs(t, err, os.ErrNotExist, "Finish leaves no entry for an ended job")
		})
	}
}

// A job that ends without its runner's Finish leaves the live index too:
// cancelled while queued (RequestCancel writes it at once), or lost when a
// Reconcile or a Start takes over a runner that went away.
func TestEnded_WithoutFinishTheJobLeavesTheLiveIndex(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  func(t *testing.T, dir jobstore.JobDir)
		want jobstore.State
	}{
		{"cancelled while queued", func(t *testing.T, dir jobstore.JobDir) {
			require.NoError(t, jobstore.RequestCancel(dir, jobstore.CancelRequest{RequestedBy: "t", Reason: "test"}))
		}, jobstore.Cancelled},
		{"taken over by Start: lost", func(t *testing.T, dir jobstore.JobDir) {
			run, err := jobstore.Start(dir)
			require.NoError(t, err)
			require.NoError(t, run.Close()) // gone without a final state
			_, err = jobstore.Start(dir)
			require.ErrorIs(t, err, jobstore.ErrWrongState, "the job's one attempt ended lost")
		}, jobstore.Lost},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := tempDir(t)
			dir, err := jobstore.Submit(root, jobstore.JobSpec{ID: "j", Kind: "k"})
			require.NoError(t, err)
			entry := filepath.Join(root, jobstore.LiveDir, "j")
			require.DirExists(t, entry, "Submit makes the entry")
			tc.end(t, dir)
			st, err := jobstore.ReadStatus(dir)
			require.NoError(t, err)
			require.Equal(t, tc.want, st.State)
			_, err = os.Lstat(entry)
			require.ErrorIs(t, err, os.ErrNotExist, "an ended job keeps no entry")
		})
	}
}
