package jobstore

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/axqua/jobstore/internal/testdir"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// liveEntries lists root's LiveDir.
func liveEntries(t *testing.T, root string) []string {
	t.Helper()
	des, err := os.ReadDir(filepath.Join(root, LiveDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	require.NoError(t, err)
	var names []string
	for _, de := range des {
		names = append(names, de.Name())
	}
	return names
}

// requireIndexAgrees checks that root's LiveDir names exactly the jobs of
// root that have not ended.
func requireIndexAgrees(t *testing.T, root string) {
	t.Helper()
	var live []string
	entries, err := List(root)
	require.NoError(t, err)
	for _, e := range entries {
		if e.Status == nil || !e.Status.State.Terminal() {
			live = append(live, e.Dir.ID())
		}
	}
	got := liveEntries(t, root)
	slices.Sort(live)
	slices.Sort(got)
	require.Equal(t, live, got, "LiveDir must name the live jobs, and only them")
}

// A Submit stopped at any of its steps (a crash there leaves what the pause
// leaves on disk) leaves the index and the jobs agreeing once a view's
// first full scan has run; the job, once whole, is a candidate.
func TestLiveIndex_SubmitStoppedAtAnyStepAgreesAfterTheNextLook(t *testing.T) {
	for _, step := range []string{"mkdir", SpecFile, StatusFile, "published", "indexed"} {
		t.Run(step, func(t *testing.T) {
			root := testdir.New(t)
			_, err := Submit(root, JobSpec{ID: "other", Kind: "test"})
			require.NoError(t, err)
			paused := make(chan struct{})
			release := make(chan struct{})
			f := func(s, _ string) {
				if s == step {
					close(paused)
					<-release
				}
			}
			submitSeam.Store(&f)
			t.Cleanup(func() { submitSeam.Store(nil) })
			done := make(chan error, 1)
			go func() {
				_, err := Submit(root, JobSpec{ID: "new", Kind: "test"})
				done <- err
			}()
			<-paused
			submitSeam.Store(nil)
			t.Cleanup(func() { close(release); <-done })

			tc := newTestNextCache(root, 0) // a fresh view: its first look begins a full scan
			tc.lookCounting(t)
			tc.waitScan()
			names, _, _ := tc.lookCounting(t) // takes what the scan found
			requireIndexAgrees(t, root)
			want := []string{"other"}
			if _, err := os.Lstat(filepath.Join(root, "new", StatusFile)); err == nil {
				want = append(want, "new") // published: whole, startable
			}
			assert.ElementsMatch(t, want, names)
		})
	}
}

// A view that already made its full scan finds a job whose entry is
// missing (its Submit stopped between the two steps) at once when the
// root's events name it, and at the next full scan without events; either
// way the entry is made.
func TestLiveIndex_JobWithoutEntryIsFoundByEventsOrTheNextFullScan(t *testing.T) {
	t.Run("events", func(t *testing.T) {
		root := testdir.New(t)
		_, err := Submit(root, JobSpec{ID: "first", Kind: "test"})
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		v, err := OpenView(root)
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, v.Close()) })
		r, err := v.StartNext(ctx) // the view's full scan is done
		require.NoError(t, err)
		require.NoError(t, r.Close())

		started := make(chan *Run, 1)
		go func() {
			r, err := v.StartNext(ctx)
			if err != nil {
				t.Error(err)
			}
			started <- r
		}()
		time.Sleep(50 * time.Millisecond) // StartNext waits by now (if not, its look finds the job: the test passes weakly)
		dir := writeUnindexed(t, root, "bare")
		select {
		case r := <-started:
			require.NotNil(t, r)
			assert.Equal(t, dir, r.Dir())
			require.NoError(t, r.Close())
		case <-ctx.Done():
			t.Fatal("a job with no entry was not found by the root's events")
		}
		assert.Contains(t, liveEntries(t, root), "bare", "the job was indexed")
	})
	t.Run("full scan", func(t *testing.T) {
		root := testdir.New(t)
		_, err := Submit(root, JobSpec{ID: "first", Kind: "test"})
		require.NoError(t, err)
		tc := newTestNextCache(root, time.Hour)
		names, _, _ := tc.lookCounting(t)
		require.Equal(t, []string{"first"}, names)
		writeUnindexed(t, root, "bare")
		names, _, _ = tc.lookCounting(t)
		require.Equal(t, []string{"first"}, names, "no entry, no event, no full scan due: not seen yet")
		tc.skew += RepairInterval
		tc.lookCounting(t) // begins the full scan, on its own goroutine
		tc.waitScan()
		names, _, _ = tc.lookCounting(t)
		assert.ElementsMatch(t, []string{"first", "bare"}, names, "the full scan finds it")
		assert.Contains(t, liveEntries(t, root), "bare", "and indexes it")
	})
}

// writeUnindexed makes a queued job id under root the way a writer that
// knows nothing of LiveDir does: records in a directory of its own, renamed
// into place.
func writeUnindexed(t *testing.T, root, id string) JobDir {
	t.Helper()
	outside, err := os.MkdirTemp(filepath.Dir(root), "build")
	require.NoError(t, err)
	build := filepath.Join(outside, id)
	require.NoError(t, os.Mkdir(build, 0o755))
	require.NoError(t, WriteSpec(JobDir(build), JobSpec{ID: id, Kind: "test"}))
	require.NoError(t, WriteStatus(JobDir(build), JobStatus{JobID: id, State: Queued, Seq: 1}))
	dir := JobDir(filepath.Join(root, id))
	require.NoError(t, os.Rename(build, string(dir)))
	return dir
}

// A look removes the entries of the jobs that ended and of those removed
// (by hand, say), and a job's entry stays while it runs.
func TestLiveIndex_EndedAndRemovedJobsLeaveIt(t *testing.T) {
	root := testdir.New(t)
	for _, id := range []string{"done", "gone", "running", "queued"} {
		_, err := Submit(root, JobSpec{ID: id, Kind: "test"})
		require.NoError(t, err)
	}
	r, err := Start(JobDir(filepath.Join(root, "done")))
	require.NoError(t, err)
	require.NoError(t, r.Finish(Outcome{State: Succeeded}))
	require.NoError(t, r.Close())
	running, err := Start(JobDir(filepath.Join(root, "running")))
	require.NoError(t, err)
	defer running.Close()
	require.NoError(t, os.Rename(filepath.Join(root, "gone"), filepath.Join(root, ".moved-away")))

	tc := newTestNextCache(root, 0)
	names, _, _ := tc.lookCounting(t)
	assert.Equal(t, []string{"queued"}, names)
	entries := liveEntries(t, root)
	slices.Sort(entries)
	assert.Equal(t, []string{"queued", "running"}, entries)
	requireIndexAgrees(t, root)
}

// retire removes an entry, then reads the job again: a job made live again
// meanwhile (a Retry whose own entry came before the removal) keeps its
// entry. Without that second read, the Retry's job would wait for a full
// scan.
func TestLiveIndex_RetireKeepsAJobLiveAgain(t *testing.T) {
	root := testdir.New(t)
	dir, err := Submit(root, JobSpec{ID: "j", Kind: "test"})
	require.NoError(t, err)
	r, err := Start(dir)
	require.NoError(t, err)
	require.NoError(t, r.Finish(Outcome{State: Failed, Error: "boom"}))
	require.NoError(t, r.Close())
	// A look read "failed" here; then Retry queues the job again and makes
	// its entry (there already); then the look retires it.
	require.NoError(t, Retry(dir))
	retire(dir)
	assert.Equal(t, []string{"j"}, liveEntries(t, root), "the job is queued: its entry must stay")

	r, err = Start(dir)
	require.NoError(t, err)
	require.NoError(t, r.Finish(Outcome{State: Succeeded}))
	require.NoError(t, r.Close())
	retire(dir)
	assert.Empty(t, liveEntries(t, root), "an ended job's entry goes")
}

// A Remove stopped at any of its steps leaves an entry at most for its job,
// which the next look retires.
func TestLiveIndex_RemoveStoppedAtAnyStepAgreesAfterTheNextLook(t *testing.T) {
	for _, step := range []string{"claimed", "hidden"} {
		t.Run(step, func(t *testing.T) {
			root := testdir.New(t)
			dir, err := Submit(root, JobSpec{ID: "j", Kind: "test"})
			require.NoError(t, err)
			r, err := Start(dir)
			require.NoError(t, err)
			require.NoError(t, r.Finish(Outcome{State: Succeeded}))
			require.NoError(t, r.Close())
			paused := make(chan struct{})
			release := make(chan struct{})
			var once bool
			f := func(s, _ string) {
				if s == step && !once {
					once = true
					close(paused)
					<-release
				}
			}
			removeSeam.Store(&f)
			t.Cleanup(func() { removeSeam.Store(nil) })
			done := make(chan error, 1)
			go func() { done <- Remove(dir) }()
			<-paused
			t.Cleanup(func() { close(release); <-done })

			tc := newTestNextCache(root, 0)
			names, _, _ := tc.lookCounting(t)
			assert.Empty(t, names)
			requireIndexAgrees(t, root)
		})
	}
}

// List, and so check and prune, and WatchRoot pass LiveDir over: it is no
// job.
func TestLiveIndex_IsNoJob(t *testing.T) {
	root := testdir.New(t)
	_, err := Submit(root, JobSpec{ID: "j", Kind: "test"})
	require.NoError(t, err)
	require.NotEmpty(t, liveEntries(t, root))
	entries, err := List(root)
	require.NoError(t, err)
	require.Len(t, entries, 1)
	assert.Equal(t, "j", entries[0].Dir.ID())
	assert.NoError(t, entries[0].Err)
}

// A LiveDir that is no directory (a file in its place) costs the index,
// never the jobs: a look finds them by its full scan, and a Submit still
// succeeds.
func TestLiveIndex_AFileInItsPlaceLeavesTheJobsStartable(t *testing.T) {
	root := testdir.New(t)
	require.NoError(t, os.MkdirAll(root, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, LiveDir), []byte("not an index"), 0o644))
	_, err := Submit(root, JobSpec{ID: "j", Kind: "test"})
	require.NoError(t, err)
	tc := newTestNextCache(root, 0)
	tc.lookCounting(t) // begins the full scan
	tc.waitScan()
	names, _, _ := tc.lookCounting(t)
	assert.Equal(t, []string{"j"}, names, "found by the full scan, though it could make no entry")
	b, err := os.ReadFile(filepath.Join(root, LiveDir))
	require.NoError(t, err)
	assert.Equal(t, "not an index", string(b), "left as it was")
}

// A look that is the only one (StartNext with a done context) on a root it
// has no view of yet reads the root whole first: a job without an entry is
// not missed by it, nor by a Worker about to end idle (WithUntilIdle).
func TestLiveIndex_TheOnlyLookOfAFreshViewReadsTheRootWhole(t *testing.T) {
	root := testdir.New(t)
	dir := writeUnindexed(t, root, "bare")
	done, cancel := context.WithCancel(context.Background())
	cancel()
	r, err := StartNext(done, root)
	require.NoError(t, err)
	assert.Equal(t, dir, r.Dir())
	require.NoError(t, r.Close())

	root2 := testdir.New(t)
	writeUnindexed(t, root2, "bare")
	ran := 0
	w, err := NewWorker(root2, func(context.Context, *Run) error { ran++; return nil }, WithUntilIdle())
	require.NoError(t, err)
	require.NoError(t, w.Run(context.Background()))
	assert.Equal(t, 1, ran, "the worker ran the job before it ended idle")
}
