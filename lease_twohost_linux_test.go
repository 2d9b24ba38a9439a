package jobstore_test

import (
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/require"
)

// A runner on A paused past its lease (a laptop's sleep) that nobody took
// over goes on when it resumes: it re-establishes its claim as the next
// attempt, and a watcher on B never sees seq go back.
func TestTwoHosts_PausedRunnerThatNobodyTookOverGoesOn(t *testing.T) {
	forEachTwoHosts(t, func(t *testing.T, h *twoHosts) {
		dirB, w := runningOnA(t, h)
		stop := make(chan struct{})
		wg := watchSeq(t, dirB, stop)
		require.NoError(t, w.cmd.Process.Signal(syscall.SIGSTOP))
		t.Cleanup(func() { _ = w.cmd.Process.Signal(syscall.SIGCONT) })
		time.Sleep(3 * h.Lease)
		require.NoError(t, w.cmd.Process.Signal(syscall.SIGCONT))
		fmt.Fprintln(w.stdin, "finish")
		require.Equal(t, "finished", w.line(t), "the runner must go on after its pause")
		close(stop)
		wg.Wait()
		st, err := jobstore.ReadStatus(jobstore.JobDir(filepath.Join(h.Server, "j1")))
		require.NoError(t, err)
		require.Equal(t, jobstore.Succeeded, st.State)
		require.EqualValues(t, 2, st.Attempt, "the runner went on as the next attempt")
	})
}

// An owner on A whose write is fenced from B between its temp file's
// creation and its rename: the write fails with ErrNotOwner and leaves no
// temp file anywhere, though a path-based FUSE server (bindfs) resolves the
// owner's held attempt directory by the path it had before the fence. The
// rename comes once A's client may have cached the attempt directory's name
// (twice the kit's staleness: GlusterFS keeps it a second), as it always
// does: a
// process fences an owner only after a whole lease of silence from it,
// longer than any such cache (the lease bound, L > D).
func TestTwoHosts_FencedWriteLeavesNoTempFileOnPathBasedFUSE(t *testing.T) {
	forEachTwoHosts(t, func(t *testing.T, h *twoHosts) {
		rounds := 15
		if h.Staleness > 0 {
			rounds = 5 // each waits for the cache
		}
		for i := range rounds {
			id := fmt.Sprintf("j%d", i)
			dirB, err := jobstore.Submit(h.B, jobstore.JobSpec{ID: id, Kind: "k"})
			require.NoError(t, err)
			dirA := jobstore.JobDir(filepath.Join(h.A, id))
			o, err := jobstore.ClaimAsOwner(dirA, 1, time.Minute)
			require.NoError(t, err)
			err = o.WriteAfter(jobstore.JobStatus{State: jobstore.Running, Seq: 2}, func() {
				won, err := jobstore.FenceAttempt(dirB, 1)
				require.NoError(t, err)
				require.True(t, won)
				time.Sleep(2 * h.Staleness)
			})
			o.Close()
			require.ErrorIs(t, err, jobstore.ErrNotOwner, "round %d", i)
			requireNoTempFiles(t, filepath.Join(h.Server, id), "round %d: a fenced write must remove its temp file", i)
		}
	})
}
