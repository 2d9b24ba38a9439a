package jobstore_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/require"
)

// waitGuard bounds a test that waits for StartNext or Wait to return: it
// fails the test instead of hanging it. It is no latency limit.
const waitGuard = 30 * time.Second

// openView opens a View of root, closed when the test ends: a test or
// benchmark that calls StartNext in a loop keeps one view between calls.
func openView(t testing.TB, root string) *jobstore.View {
	t.Helper()
	v, err := jobstore.OpenView(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := v.Close(); err != nil {
			t.Error(err)
		}
	})
	return v
}

// doneCtx is a context that is already done: StartNext looks once.
func doneCtx() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// startNextOnce is StartNext looking once, the Run closed at cleanup; nil
// when nothing was startable.
func startNextOnce(t *testing.T, root string, opts ...jobstore.StartOption) *jobstore.Run {
	t.Helper()
	r, err := jobstore.StartNext(doneCtx(), root, opts...)
	if errors.Is(err, context.Canceled) {
		return nil
	}
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.Close() })
	return r
}

// drainOrder starts every startable job, looking once each time, and
// returns their IDs in the order started.
func drainOrder(t *testing.T, root string, opts ...jobstore.StartOption) []string {
	t.Helper()
	var ids []string
	for r := startNextOnce(t, root, opts...); r != nil; r = startNextOnce(t, root, opts...) {
		ids = append(ids, r.Dir().ID())
	}
	return ids
}

// drainView is drainOrder through v: its calls share one view.
func drainView(t *testing.T, v *jobstore.View, opts ...jobstore.StartOption) []string {
	t.Helper()
	var ids []string
	for {
		r, err := v.StartNext(doneCtx(), opts...)
		if errors.Is(err, context.Canceled) {
			return ids
		}
		require.NoError(t, err)
		ids = append(ids, r.Dir().ID())
		t.Cleanup(func() { _ = r.Close() })
	}
}

func TestStartNext_StartsQueuedJobsOldestFirstAndNothingElse(t *testing.T) {
	root := tempDir(t)
	// Queued: c is the oldest; a and b tie and go by ID.
	writeJob(t, root, specAt("c", 0), statusIn(jobstore.Queued, 1))
	writeJob(t, root, specAt("b", 5), statusIn(jobstore.Queued, 1))
	writeJob(t, root, specAt("a", 5), statusIn(jobstore.Queued, 1))
	// Never started, though older: running, ended, cancel requested, no
	// status.json yet, not a job, hidden, a link to a queued job.
	writeJob(t, root, specAt("running", -9), statusIn(jobstore.Running, 2))
	for i, st := range []jobstore.State{jobstore.Succeeded, jobstore.Failed, jobstore.Cancelled, jobstore.Lost} {
		writeJob(t, root, specAt(string(st), -8+i), statusIn(st, 3))
	}
	x := writeJob(t, root, specAt("cancelme", -3), statusIn(jobstore.Queued, 1))
	writeRecord(t, x.CancelPath(), jobstore.CancelRequest{SchemaVersion: 1, JobID: "cancelme", RequestedAt: submitted})
	writeJob(t, root, specAt("nostatus", -2), nil)
	require.NoError(t, os.Mkdir(filepath.Join(root, "junk"), 0o755))
	hidden := writeJob(t, tempDir(t), specAt("hidden", -1), statusIn(jobstore.Queued, 1))
	require.NoError(t, os.Rename(string(hidden), filepath.Join(root, ".hidden")))
	if runtime.GOOS != "windows" { // links need privileges there, and Wine's are not reparse points
		linked := writeJob(t, tempDir(t), specAt("linked", -1), statusIn(jobstore.Queued, 1))
		require.NoError(t, os.Symlink(string(linked), filepath.Join(root, "linked")))
	}
	writeFile(t, filepath.Join(root, jobstore.IndexFile), []byte("{}"))

	before := snapshot(t, root)
	require.Equal(t, []string{"c", "a", "b"}, drainOrder(t, root))
	for _, id := range []string{"c", "a", "b"} {
		require.Equal(t, jobstore.Running, readStatus(t, jobstore.JobDir(filepath.Join(root, id))).State)
	}
	after := snapshot(t, root)
	for name, st := range before {
		if name == "." || name == jobstore.LiveDir || filepath.Dir(name) == jobstore.LiveDir {
			continue // the root and its live index: StartNext keeps the index
		}
		if dir := filepath.Dir(name); dir != "c" && dir != "a" && dir != "b" && name != "c" && name != "a" && name != "b" {
			require.Equal(t, st, after[name], "StartNext changed %s, which it must not start", name)
		}
	}
	for name := range after {
		top := strings.Split(filepath.ToSlash(name), "/")[0]
		if _, ok := before[name]; !ok && top != jobstore.LiveDir && top != "a" && top != "b" && top != "c" {
			t.Errorf("StartNext made %s: it may add only the live index's entries", name)
		}
	}
}

func TestStartNext_OnlyTheKindsAsked(t *testing.T) {
	root := tempDir(t)
	for i, kind := range []string{"render", "encode", "render", "upload"} {
		spec := specAt(string(rune('a'+i)), i)
		spec.Kind = kind
		writeJob(t, root, spec, statusIn(jobstore.Queued, 1))
	}
	require.Equal(t, []string{"b", "d"}, drainOrder(t, root, jobstore.WithKinds("encode"), jobstore.WithKinds("upload")))
	require.Equal(t, []string{"a", "c"}, drainOrder(t, root, jobstore.WithKinds()))

	_, err := jobstore.StartNext(doneCtx(), root, jobstore.WithKinds("render", ""))
	require.ErrorIs(t, err, jobstore.ErrInvalid)
	require.Equal(t, "kinds", errOf(t, err).Subject)
}

func TestStartNext_PassesOverAJobAnotherRunnerHolds(t *testing.T) {
	root := tempDir(t)
	a := writeJob(t, root, specAt("a", 0), statusIn(jobstore.Queued, 1))
	writeJob(t, root, specAt("b", 1), statusIn(jobstore.Queued, 1))
	lk, err := jobstore.LockJob(a)
	require.NoError(t, err)
	require.Equal(t, []string{"b"}, drainOrder(t, root))
	require.NoError(t, lk.Unlock())
	require.Equal(t, []string{"a"}, drainOrder(t, root), "a freed job is startable again")
}

func TestStartNext_ContextDone(t *testing.T) {
	root := tempDir(t)
	writeJob(t, root, specAt("done", 0), statusIn(jobstore.Succeeded, 3))

	t.Run("already done: looks once and returns the context's error", func(t *testing.T) {
		ctx, cancel := context.WithCancelCause(context.Background())
		why := errors.New("the worker is stopping")
		cancel(why)
		r, err := jobstore.StartNext(ctx, root)
		require.Nil(t, r)
		require.ErrorIs(t, err, context.Canceled)
		require.Contains(t, errOf(t, err).Error(), "the worker is stopping")
	})
	t.Run("deadline while waiting", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		r, err := jobstore.StartNext(ctx, root)
		require.Nil(t, r)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		errOf(t, err)
	})
	t.Run("already done with a startable job: starts it", func(t *testing.T) {
		writeJob(t, root, specAt("queued", 1), statusIn(jobstore.Queued, 1))
		r, err := jobstore.StartNext(doneCtx(), root)
		require.NoError(t, err)
		require.Equal(t, "queued", r.Dir().ID())
		require.NoError(t, r.Close())
	})
}

func TestStartNext_MissingRootIsAnErrorAtOnce(t *testing.T) {
	root := filepath.Join(tempDir(t), "no-such-root")
	ctx, cancel := context.WithTimeout(context.Background(), waitGuard)
	defer cancel()
	_, err := jobstore.StartNext(ctx, root)
	require.ErrorIs(t, err, fs.ErrNotExist)
	require.NotErrorIs(t, err, context.DeadlineExceeded)
	require.NotEmpty(t, errOf(t, err).Remedy)
}

// startNextAsync runs StartNext in a goroutine; the channel delivers its
// result.
func startNextAsync(ctx context.Context, root string, opts ...jobstore.StartOption) <-chan startResult {
	ch := make(chan startResult, 1)
	go func() {
		r, err := jobstore.StartNext(ctx, root, opts...)
		ch <- startResult{r, err}
	}()
	return ch
}

type startResult struct {
	run *jobstore.Run
	err error
}

// awaitStart waits for a StartNext started by startNextAsync, failing the
// test after waitGuard.
func awaitStart(t *testing.T, ch <-chan startResult) *jobstore.Run {
	t.Helper()
	select {
	case res := <-ch:
		require.NoError(t, res.err)
		t.Cleanup(func() { _ = res.run.Close() })
		return res.run
	case <-time.After(waitGuard):
		t.Fatalf("StartNext did not return within %v", waitGuard)
		return nil
	}
}

// idleWhile is how long a test lets a StartNext wait before it changes
// the root: long enough that the call is usually waiting by then, which
// the tests need not rely on (they pass either way if StartNext works).
const idleWhile = 100 * time.Millisecond

// An event wakes a waiting StartNext: with a scan interval of an hour,
// only the event can.
func TestStartNext_WakesOnASubmissionOnThisHost(t *testing.T) {
	for _, tc := range []struct {
		name   string
		submit func(t *testing.T, root string)
	}{
		{"Submit", func(t *testing.T, root string) {
			_, err := jobstore.Submit(root, jobstore.JobSpec{ID: "new", Kind: "test"})
			require.NoError(t, err)
		}},
		{"a directory made first, its records written later", func(t *testing.T, root string) {
			dir := filepath.Join(root, "new")
			require.NoError(t, os.Mkdir(dir, 0o755))
			time.Sleep(idleWhile) // StartNext sees the directory incomplete
			require.NoError(t, jobstore.WriteSpec(jobstore.JobDir(dir), jobstore.JobSpec{ID: "new", Kind: "test"}))
			time.Sleep(idleWhile) // and then without status.json
			require.NoError(t, jobstore.WriteStatus(jobstore.JobDir(dir), jobstore.JobStatus{State: jobstore.Queued, Seq: 1}))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := tempDir(t)
			writeJob(t, root, specAt("old", 0), statusIn(jobstore.Succeeded, 3))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			ch := startNextAsync(ctx, root, jobstore.WithScanInterval(time.Hour))
			time.Sleep(idleWhile)
			tc.submit(t, root)
			require.Equal(t, "new", awaitStart(t, ch).Dir().ID())
		})
	}
}

// Without events (another host's submission on NFS), the scan finds it.
func TestStartNext_ScanFindsAJobWithoutEvents(t *testing.T) {
	root := tempDir(t)
	writeJob(t, root, specAt("old", 0), statusIn(jobstore.Succeeded, 3))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := startNextAsync(ctx, root, jobstore.WithoutNextEvents(), jobstore.WithScanInterval(20*time.Millisecond))
	time.Sleep(idleWhile)
	_, err := jobstore.Submit(root, jobstore.JobSpec{ID: "new", Kind: "test"})
	require.NoError(t, err)
	require.Equal(t, "new", awaitStart(t, ch).Dir().ID())
}

// Many callers, in one process, on jobs submitted while they wait: each
// job is started once.
func TestStartNext_ConcurrentCallersStartEachJobOnce(t *testing.T) {
	root := tempDir(t)
	const callers, jobs = 8, 60
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	started := map[string]int{}
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			for {
				r, err := jobstore.StartNext(ctx, root, jobstore.WithScanInterval(20*time.Millisecond))
				if err != nil {
					if !errors.Is(err, context.Canceled) {
						t.Errorf("StartNext: %v", err)
					}
					return
				}
				mu.Lock()
				started[r.Dir().ID()]++
				mu.Unlock()
				if err := r.Finish(jobstore.Outcome{State: jobstore.Succeeded}); err != nil {
					t.Errorf("Finish: %v", err)
				}
				_ = r.Close()
			}
		})
	}
	var dirs []jobstore.JobDir
	for i := range jobs {
		dir, err := jobstore.Submit(root, jobstore.JobSpec{Kind: "test"})
		require.NoError(t, err)
		dirs = append(dirs, dir)
		if i%10 == 0 {
			time.Sleep(time.Millisecond)
		}
	}
	ended := 0
	deadline := time.Now().Add(waitGuard)
	for ended < jobs && time.Now().Before(deadline) {
		ended = 0
		for _, d := range dirs {
			if st := readStatus(t, d); st.State.Terminal() {
				ended++
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	wg.Wait()
	require.Equal(t, jobs, ended, "jobs left unstarted")
	for _, d := range dirs {
		require.Equal(t, 1, started[d.ID()], "job %s started %d times", d.ID(), started[d.ID()])
		require.Equal(t, jobstore.Succeeded, readStatus(t, d).State)
	}
}

// A queued job StartNext cannot start for a fault of its own is passed
// over, reported once by a view, and does not hold back the jobs after it.
func TestStartNext_PassesOverABrokenJobAndReportsItOnce(t *testing.T) {
	root := tempDir(t)
	corrupt := writeJob(t, root, specAt("corrupt", 0), statusIn(jobstore.Queued, 1))
	writeFile(t, corrupt.SpecPath(), []byte(`{"schema_version": 1, "job_id": "corrupt", "kind": `))
	newer := writeJob(t, root, specAt("newer", 1), nil)
	writeFile(t, newer.StatusPath(), []byte(`{"schema_version": 99, "job_id": "newer", "state": "queued", "seq": 1}`))
	locked := writeJob(t, root, specAt("lockdir", 2), statusIn(jobstore.Queued, 1)) // Start fails on it
	require.NoError(t, os.Mkdir(filepath.Join(string(locked), jobstore.LockFile), 0o755))
	writeJob(t, root, specAt("good", 3), statusIn(jobstore.Queued, 1))

	var mu sync.Mutex
	reported := map[string][]error{}
	skipped := jobstore.WithSkipped(func(dir jobstore.JobDir, err error) {
		mu.Lock()
		defer mu.Unlock()
		reported[dir.ID()] = append(reported[dir.ID()], err)
	})
	v := openView(t, root)
	require.Equal(t, []string{"good"}, drainView(t, v, skipped))
	require.Empty(t, drainView(t, v, skipped))
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, reported, 3, "%v", reported)
	require.Len(t, reported["corrupt"], 1)
	require.ErrorIs(t, reported["corrupt"][0], jobstore.ErrCorrupt)
	require.Len(t, reported["newer"], 1)
	require.ErrorIs(t, reported["newer"][0], jobstore.ErrNewerSchema)
	require.Len(t, reported["lockdir"], 1)
	require.ErrorIs(t, reported["lockdir"][0], jobstore.ErrNotRegular)
	require.Equal(t, jobstore.Queued, readStatus(t, locked).State)
}

// A job with a cancel request, or one that ended meanwhile, is passed over
// without a report even when StartNext's knowledge of it is stale.
func TestStartNext_PassesOverAJobCancelledOrEndedMeanwhile(t *testing.T) {
	root := tempDir(t)
	a := writeJob(t, root, specAt("a", 0), statusIn(jobstore.Queued, 1))
	b := writeJob(t, root, specAt("b", 1), statusIn(jobstore.Queued, 1))
	writeJob(t, root, specAt("c", 2), statusIn(jobstore.Queued, 1))
	var reports []error
	skipped := jobstore.WithSkipped(func(_ jobstore.JobDir, err error) { reports = append(reports, err) })
	// A first look learns all three queued; then a is cancelled and b
	// ends, as another host would do it.
	r := startNextOnce(t, root, jobstore.WithKinds("none"), skipped)
	require.Nil(t, r)
	require.NoError(t, jobstore.RequestCancel(a, jobstore.CancelRequest{}))
	run, err := jobstore.Start(b)
	require.NoError(t, err)
	require.NoError(t, run.Finish(jobstore.Outcome{State: jobstore.Failed}))
	require.NoError(t, run.Close())
	require.Equal(t, []string{"c"}, drainOrder(t, root, skipped))
	require.Empty(t, reports)
	require.Equal(t, jobstore.Cancelled, readStatus(t, a).State)
}
