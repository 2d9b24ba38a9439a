package jobstore_test

import (
	"context"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/require"
)

// handOffDeadline bounds a WithUntilIdle drain of a few jobs.
const handOffDeadline = 30 * time.Second

// A Worker with WithParallel(n) hands the taking on before a job's Start:
// a Start that then fails (the job held by another runner) ends only that
// goroutine, the others drain the rest, and WithUntilIdle returns once
// nothing is left, never while a Start is under way.
func TestWorker_StartFailingAfterHandOffLeavesTheTakingToTheOthers(t *testing.T) {
	for _, parallel := range []int{2, 8} {
		t.Run("parallel="+strconv.Itoa(parallel), func(t *testing.T) {
			root := tempDir(t)
			for _, id := range []string{"a", "b", "c", "d"} {
				_, err := jobstore.Submit(root, jobstore.JobSpec{ID: id, Kind: "k"})
				require.NoError(t, err)
			}
			held, err := jobstore.Start(jobstore.JobDir(filepath.Join(root, "a"))) // the best job: picked first, its Start fails
			require.NoError(t, err)
			t.Cleanup(func() { _ = held.Close() })
			var mu sync.Mutex
			var ran []string
			w, err := jobstore.NewWorker(root, func(_ context.Context, run *jobstore.Run) error {
				mu.Lock()
				defer mu.Unlock()
				ran = append(ran, run.Dir().ID())
				return nil
			}, jobstore.WithParallel(parallel), jobstore.WithUntilIdle())
			require.NoError(t, err)
			ctx, cancel := context.WithTimeout(context.Background(), handOffDeadline)
			defer cancel()
			require.NoError(t, w.Run(ctx))
			slices.Sort(ran)
			require.Equal(t, []string{"b", "c", "d"}, ran, "every job but the held one ran, each once")
		})
	}
}
