package jobstore_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// workerScan is the scan interval of the Workers these tests run: short,
// so that a rescue pass comes soon.
const workerScan = 100 * time.Millisecond

// runWorker runs a Worker of root with h and opts until stop is called;
// stop cancels Run's context and returns Run's error.
func runWorker(t *testing.T, root string, h jobstore.Handler, opts ...jobstore.WorkerOption) (stop func() error) {
	t.Helper()
	opts = append([]jobstore.WorkerOption{jobstore.WithStartOptions(jobstore.WithScanInterval(workerScan))}, opts...)
	w, err := jobstore.NewWorker(root, h, opts...)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	var once sync.Once
	var runErr error
	stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case runErr = <-done:
			case <-time.After(waitGuard):
				t.Fatal("Worker.Run did not return after its context ended")
			}
		})
		return runErr
	}
	t.Cleanup(func() { _ = stop() })
	return stop
}

// waitState waits until dir's status says one of states, and returns it.
func waitState(t *testing.T, dir jobstore.JobDir, states ...jobstore.State) jobstore.JobStatus {
	t.Helper()
	deadline := time.Now().Add(waitGuard)
	for {
		st, err := jobstore.ReadStatus(dir)
		if err == nil && st != nil {
			for _, s := range states {
				if st.State == s {
					return *st
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never reached %v (last: %+v, %v)", dir.ID(), states, st, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func submitKind(t *testing.T, root string, spec jobstore.JobSpec) jobstore.JobDir {
	t.Helper()
	if spec.Kind == "" {
		spec.Kind = "test"
	}
	dir, err := jobstore.Submit(root, spec)
	require.NoError(t, err)
	return dir
}

func TestWorker_RunsJobsInParallelAndRecordsEachOutcome(t *testing.T) {
	root := tempDir(t)
	var dirs []jobstore.JobDir
	for i := range 6 {
		dirs = append(dirs, submitKind(t, root, jobstore.JobSpec{ID: fmt.Sprintf("j%d", i), Params: []byte(fmt.Sprint(i))}))
	}
	var running, most atomic.Int32
	release := make(chan struct{})
	h := func(ctx context.Context, run *jobstore.Run) error {
		n := running.Add(1)
		defer running.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		require.NoError(t, run.Progress(0.5, "half"))
		<-release
		if string(run.Spec().Params) == "3" {
			return errors.New("frame 3 did not render")
		}
		return nil
	}
	stop := runWorker(t, root, h, jobstore.WithParallel(3))
	require.Eventually(t, func() bool { return running.Load() == 3 }, waitGuard, time.Millisecond)
	close(release)
	for i, dir := range dirs {
		st := waitState(t, dir, jobstore.Succeeded, jobstore.Failed)
		if i == 3 {
			assert.Equal(t, jobstore.Failed, st.State)
			assert.Equal(t, "frame 3 did not render", st.Error)
		} else {
			assert.Equal(t, jobstore.Succeeded, st.State, dir.ID())
			assert.Equal(t, 0.5, *st.Progress)
		}
	}
	assert.Equal(t, int32(3), most.Load(), "never more than WithParallel at once")
	require.NoError(t, stop())
}

// TestWorker_ASlotFreedWhileAnotherHandlerRunsIsFilled: with two slots,
// a's handler returns once b runs, and b's returns only once c runs: c
// must start while b still runs, taken by the goroutine that ran a (the
// one that ran b, which took the last slot, is busy).
func TestWorker_ASlotFreedWhileAnotherHandlerRunsIsFilled(t *testing.T) {
	root := tempDir(t)
	var dirs []jobstore.JobDir
	for _, id := range []string{"a", "b", "c"} {
		dirs = append(dirs, submitKind(t, root, jobstore.JobSpec{ID: id}))
		time.Sleep(2 * time.Millisecond) // oldest first: a, b, c
	}
	started := map[string]chan struct{}{"a": make(chan struct{}), "b": make(chan struct{}), "c": make(chan struct{})}
	stop := runWorker(t, root, func(ctx context.Context, run *jobstore.Run) error {
		id := run.Dir().ID()
		close(started[id])
		wait := map[string]string{"a": "b", "b": "c"}[id]
		if wait == "" {
			return nil
		}
		select {
		case <-started[wait]:
			return nil
		case <-time.After(waitGuard):
			return fmt.Errorf("%s never started while %s ran", wait, id)
		}
	}, jobstore.WithParallel(2))
	for _, dir := range dirs {
		st := waitState(t, dir, jobstore.Succeeded, jobstore.Failed)
		assert.Equal(t, jobstore.Succeeded, st.State, "%s: %s", dir.ID(), st.Error)
	}
	require.NoError(t, stop())
}

// TestWorker_AHandlerThatEndsItsGoroutineDoesNotEndTheTaking: a handler
// that calls runtime.Goexit (t.FailNow in a test, say) ends the goroutine
// that ran it, which with one slot was the one taking jobs: the next job
// is taken all the same.
func TestWorker_AHandlerThatEndsItsGoroutineDoesNotEndTheTaking(t *testing.T) {
	root := tempDir(t)
	gone := submitKind(t, root, jobstore.JobSpec{ID: "a-goexit"})
	stop := runWorker(t, root, func(ctx context.Context, run *jobstore.Run) error {
		if run.Dir() == gone {
			require.NoError(t, run.Finish(jobstore.Outcome{State: jobstore.Failed, Error: "the handler's goroutine ended"}))
			runtime.Goexit()
		}
		return nil
	})
	waitState(t, gone, jobstore.Failed)
	next := submitKind(t, root, jobstore.JobSpec{ID: "b-next"})
	waitState(t, next, jobstore.Succeeded)
	require.NoError(t, stop())
}

func TestWorker_APanickingHandlerFailsItsAttemptAndTheWorkerGoesOn(t *testing.T) {
	root := tempDir(t)
	bad := submitKind(t, root, jobstore.JobSpec{ID: "a-bad", Params: []byte(`"panic"`)})
	good := submitKind(t, root, jobstore.JobSpec{ID: "b-good"})
	stop := runWorker(t, root, func(ctx context.Context, run *jobstore.Run) error {
		if string(run.Spec().Params) == `"panic"` {
			panic(fmt.Sprintf("the renderer crashed on %s", run.Dir().ID()))
		}
		return nil
	})
	st := waitState(t, bad, jobstore.Failed)
	assert.Contains(t, st.Error, "panic: the renderer crashed on a-bad")
	assert.Contains(t, st.Error, "worker_test.go", "the stack is in the record")
	assert.Equal(t, jobstore.Succeeded, waitState(t, good, jobstore.Succeeded).State)
	require.NoError(t, stop())
}

func TestWorker_StopWaitsForTheGraceThenPutsUnfinishedJobsBack(t *testing.T) {
	root := tempDir(t)
	quick := submitKind(t, root, jobstore.JobSpec{ID: "a-quick", Params: []byte(`"quick"`)})
	stuck := submitKind(t, root, jobstore.JobSpec{ID: "b-stuck"})
	var started sync.WaitGroup
	started.Add(2)
	finish := make(chan struct{})
	stop := runWorker(t, root, func(ctx context.Context, run *jobstore.Run) error {
		started.Done()
		if string(run.Spec().Params) == `"quick"` {
			<-finish // ends within the grace
			return nil
		}
		<-ctx.Done() // ends only when the grace is over
		return context.Cause(ctx)
	}, jobstore.WithParallel(2), jobstore.WithGrace(300*time.Millisecond))
	started.Wait()
	go func() { time.Sleep(50 * time.Millisecond); close(finish) }()
	require.NoError(t, stop())

	assert.Equal(t, jobstore.Succeeded, readStatus(t, quick).State, "a handler that ends within the grace records its outcome")
	st := readStatus(t, stuck)
	assert.Equal(t, jobstore.Queued, st.State, "an interrupted job goes back to the queue")
	assert.Nil(t, st.RetryAt, "at once")
	require.Len(t, st.Attempts, 1)
	assert.True(t, st.Attempts[0].Interrupted)
	assert.Contains(t, st.Attempts[0].Error, "the worker stopped")

	// A healthy worker runs it again.
	stop = runWorker(t, root, func(context.Context, *jobstore.Run) error { return nil })
	st = waitState(t, stuck, jobstore.Succeeded)
	require.Len(t, st.Attempts, 2, "the interrupted attempt, then the one that ran to its end")
	assert.Equal(t, jobstore.Succeeded, st.Attempts[1].State)
	require.NoError(t, stop())
}

func TestWorker_TimeoutFailsTheAttemptAndItIsRetried(t *testing.T) {
	root := tempDir(t)
	dir := submitKind(t, root, jobstore.JobSpec{Timeout: 200 * time.Millisecond, MaxAttempts: 2, Backoff: 100 * time.Millisecond})
	var calls atomic.Int32
	stop := runWorker(t, root, func(ctx context.Context, run *jobstore.Run) error {
		if calls.Add(1) == 1 {
			<-ctx.Done()
			return ctx.Err()
		}
		return nil
	})
	st := waitState(t, dir, jobstore.Succeeded)
	require.Len(t, st.Attempts, 2)
	assert.Equal(t, jobstore.Failed, st.Attempts[0].State)
	assert.Contains(t, st.Attempts[0].Error, "timed out")
	assert.Equal(t, jobstore.Succeeded, st.Attempts[1].State)
	require.NoError(t, stop())
}

func TestWorker_ACancelRequestEndsTheJobCancelled(t *testing.T) {
	root := tempDir(t)
	dir := submitKind(t, root, jobstore.JobSpec{MaxAttempts: 3})
	started := make(chan struct{})
	stop := runWorker(t, root, func(ctx context.Context, run *jobstore.Run) error {
		close(started)
		<-ctx.Done()
		return errors.New("stopped by its context")
	})
	<-started
	require.NoError(t, jobstore.RequestCancel(dir, jobstore.CancelRequest{RequestedBy: "ana", Reason: "wrong scene"}))
	st := waitState(t, dir, jobstore.Cancelled, jobstore.Failed, jobstore.Queued)
	assert.Equal(t, jobstore.Cancelled, st.State, "a cancel is never retried")
	require.NoError(t, stop())
}

func TestWorker_RescuesAJobWhoseRunnerIsGone(t *testing.T) {
	for _, tt := range []struct {
		name        string
		maxAttempts int
		want        jobstore.State
	}{
		{"attempts left: run again", 2, jobstore.Succeeded},
		{"last attempt: lost", 1, jobstore.Lost},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := tempDir(t)
			dir := submitKind(t, root, jobstore.JobSpec{MaxAttempts: tt.maxAttempts, Backoff: 50 * time.Millisecond})
			r, err := jobstore.Start(dir)
			require.NoError(t, err)
			require.NoError(t, r.Close()) // its runner is gone without a word
			require.Equal(t, jobstore.Running, readStatus(t, dir).State)

			stop := runWorker(t, root, func(context.Context, *jobstore.Run) error { return nil })
			st := waitState(t, dir, tt.want)
			if tt.maxAttempts > 1 {
				require.NotEmpty(t, st.Attempts)
				assert.Equal(t, jobstore.Lost, st.Attempts[0].State, "the attempt whose runner was gone")
			}
			require.NoError(t, stop())
		})
	}
}

func TestWorker_RunReturnsLeavingNothingBehind(t *testing.T) {
	root := tempDir(t)
	for i := range 5 {
		submitKind(t, root, jobstore.JobSpec{ID: fmt.Sprint("j", i)})
	}
	requireNothingWatched(t, "no other test's watcher is left")
	goroutines, fds := runtime.NumGoroutine(), settledOpenFiles(t)
	var done atomic.Int32
	stop := runWorker(t, root, func(ctx context.Context, run *jobstore.Run) error {
		_ = run.Context()
		done.Add(1)
		return nil
	}, jobstore.WithParallel(2))
	require.Eventually(t, func() bool { return done.Load() == 5 }, waitGuard, time.Millisecond)
	time.Sleep(3 * workerScan) // a rescue pass or two
	require.NoError(t, stop())
	requireNothingWatched(t, "the Worker's watches are gone")
	assert.LessOrEqual(t, goroutinesBackTo(t, goroutines), goroutines, "goroutines back to the baseline")
	if fds >= 0 {
		assert.Equal(t, fds, openFiles(t), "descriptors back to the baseline")
	}
}

func TestNewWorker_RefusesWhatCannotWork(t *testing.T) {
	root := tempDir(t)
	ok := func(context.Context, *jobstore.Run) error { return nil }
	for _, tt := range []struct {
		name    string
		root    string
		h       jobstore.Handler
		opts    []jobstore.WorkerOption
		is      error
		subject string
	}{
		{"nil handler", root, nil, nil, jobstore.ErrInvalid, "handler"},
		{"no parallel", root, ok, []jobstore.WorkerOption{jobstore.WithParallel(0)}, jobstore.ErrInvalid, "parallel"},
		{"negative grace", root, ok, []jobstore.WorkerOption{jobstore.WithGrace(-1)}, jobstore.ErrInvalid, "grace"},
		{"empty kind", root, ok, []jobstore.WorkerOption{jobstore.WithStartOptions(jobstore.WithKinds(""))}, jobstore.ErrInvalid, "kinds"},
		{"short lease", root, ok, []jobstore.WorkerOption{jobstore.WithStartOptions(jobstore.WithLease(time.Millisecond))}, jobstore.ErrInvalid, "lease"},
		{"missing root", filepath.Join(root, "typo"), ok, nil, fs.ErrNotExist, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := jobstore.NewWorker(tt.root, tt.h, tt.opts...)
			require.ErrorIs(t, err, tt.is)
			if tt.subject != "" {
				assert.Equal(t, tt.subject, errOf(t, err).Subject)
			}
		})
	}
}

// A Worker takes the queued jobs highest priority first, then oldest, and a
// job with not_before only once it is due, whatever its priority.
func TestWorker_StartsByPriorityThenAgeAndNotBeforeItsTime(t *testing.T) {
	root := tempDir(t)
	due := jobstore.Now().Add(2 * retryBackoff)
	submit := func(id string, prio int, notBefore time.Time) {
		submitKind(t, root, jobstore.JobSpec{ID: id, Priority: prio, NotBefore: notBefore})
	}
	submit("a-old-low", 0, time.Time{})
	submit("b-later", 9, due)
	submit("c-high", 5, time.Time{})
	submit("d-mid", 2, time.Time{})
	submit("e-high-young", 5, time.Time{})
	submit("f-negative", -1, time.Time{})

	var mu sync.Mutex
	var order []string
	started := map[string]time.Time{}
	stop := runWorker(t, root, func(ctx context.Context, run *jobstore.Run) error {
		mu.Lock()
		defer mu.Unlock()
		order = append(order, run.Dir().ID())
		started[run.Dir().ID()] = *run.Status().StartedAt
		return nil
	}) // one at a time: the order is the Worker's
	waitState(t, jobstore.JobDir(filepath.Join(root, "b-later")), jobstore.Succeeded)
	require.NoError(t, stop())

	var due0 []string // the jobs due at once, in the order they ran
	for _, id := range order {
		if id != "b-later" {
			due0 = append(due0, id)
		}
	}
	assert.Equal(t, []string{"c-high", "e-high-young", "d-mid", "a-old-low", "f-negative"}, due0, "higher priority first, then the oldest")
	assert.False(t, started["b-later"].Before(due), "b-later started %v before its not_before", due.Sub(started["b-later"]))
}

// A Worker waiting for a job that is not yet due starts it by a timer at
// its due time: with no scan in the test's time and no file system event
// after the Worker's first look, nothing else could wake it.
func TestWorker_WakesForANotBeforeJobByATimer(t *testing.T) {
	root := tempDir(t)
	due := jobstore.Now().Add(retryBackoff)
	dir := submitKind(t, root, jobstore.JobSpec{NotBefore: due})
	ran := make(chan time.Time, 1)
	w, err := jobstore.NewWorker(root, func(ctx context.Context, run *jobstore.Run) error {
		ran <- time.Now()
		return nil
	}, jobstore.WithStartOptions(jobstore.WithScanInterval(time.Hour), jobstore.WithoutNextEvents()))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	select {
	case at := <-ran:
		assert.False(t, at.Before(due), "started %v before its not_before", due.Sub(at))
	case <-time.After(waitGuard):
		t.Fatal("the Worker never started the job: no timer woke it at its not_before")
	}
	cancel()
	require.NoError(t, <-done)
	assert.Equal(t, jobstore.Succeeded, readStatus(t, dir).State)
}

// A handler that panics fails its attempt like an error: with an attempt
// left, the job is retried, and succeeds.
func TestWorker_APanicIsARetryableFailure(t *testing.T) {
	root := tempDir(t)
	dir := submitKind(t, root, jobstore.JobSpec{MaxAttempts: 2, Backoff: 50 * time.Millisecond})
	var calls atomic.Int32
	stop := runWorker(t, root, func(ctx context.Context, run *jobstore.Run) error {
		if calls.Add(1) == 1 {
			panic("the first attempt panics")
		}
		return nil
	})
	st := waitState(t, dir, jobstore.Succeeded, jobstore.Failed)
	require.NoError(t, stop())
	assert.Equal(t, jobstore.Succeeded, st.State)
	require.Len(t, st.Attempts, 2)
	assert.Equal(t, jobstore.Failed, st.Attempts[0].State)
	assert.Contains(t, st.Attempts[0].Error, "panic: the first attempt panics")
	assert.Equal(t, int32(2), calls.Load())
}

// Run returns leaving nothing behind when it stops mid-work: a handler
// interrupted after the grace, a job whose not_before timer is armed, and
// rescue passes that ran.
func TestWorker_RunReturnsMidWorkLeavingNothingBehind(t *testing.T) {
	root := tempDir(t)
	held := submitKind(t, root, jobstore.JobSpec{ID: "a-held"})
	submitKind(t, root, jobstore.JobSpec{ID: "b-later", NotBefore: jobstore.Now().Add(time.Hour)})
	requireNothingWatched(t, "no other test's watcher is left")
	goroutines, fds := runtime.NumGoroutine(), settledOpenFiles(t)
	started := make(chan struct{})
	stop := runWorker(t, root, func(ctx context.Context, run *jobstore.Run) error {
		close(started)
		<-ctx.Done()
		return context.Cause(ctx)
	}, jobstore.WithParallel(2), jobstore.WithGrace(workerScan))
	<-started
	time.Sleep(3 * workerScan) // a rescue pass or two, the timer armed
	require.NoError(t, stop())
	st := readStatus(t, held)
	assert.Equal(t, jobstore.Queued, st.State, "the interrupted job is queued again")
	requireNothingWatched(t, "the Worker's watches are gone")
	assert.LessOrEqual(t, goroutinesBackTo(t, goroutines), goroutines, "goroutines back to the baseline")
	if fds >= 0 {
		assert.Equal(t, fds, openFiles(t), "descriptors back to the baseline")
	}
}

func TestWorker_TakeGateHoldsEachTakeAndItsErrorStopsTheWorker(t *testing.T) {
	root := tempDir(t)
	for i := range 3 {
		submitKind(t, root, jobstore.JobSpec{ID: fmt.Sprint("j", i)})
	}
	open := make(chan struct{}, 3)
	broken := errors.New("the command is broken")
	var gates, ran atomic.Int32
	w, err := jobstore.NewWorker(root, func(context.Context, *jobstore.Run) error {
		ran.Add(1)
		return nil
	}, jobstore.WithParallel(3), jobstore.WithStartOptions(jobstore.WithScanInterval(workerScan)),
		jobstore.WithTakeGate(func(ctx context.Context) error {
			if gates.Add(1) == 3 {
				return broken // the third take is refused
			}
			select {
			case <-open:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}))
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- w.Run(context.Background()) }()
	time.Sleep(3 * workerScan)
	assert.Zero(t, ran.Load(), "no job is taken before the gate opens")
	open <- struct{}{}
	open <- struct{}{}
	select {
	case err = <-done:
	case <-time.After(waitGuard):
		t.Fatal("Run did not return after its gate failed")
	}
	require.ErrorIs(t, err, broken, "Run returns the gate's error")
	assert.Equal(t, int32(2), ran.Load(), "two takes passed the gate; the third was refused")
	assert.Equal(t, jobstore.Queued, readStatus(t, jobstore.JobDir(filepath.Join(root, "j2"))).State)
}

func TestWorker_UntilIdleRunsWhatIsDueThenReturns(t *testing.T) {
	root := tempDir(t)
	first := submitKind(t, root, jobstore.JobSpec{ID: "a-first"})
	later := submitKind(t, root, jobstore.JobSpec{ID: "b-later", NotBefore: time.Now().Add(time.Hour)})
	var submitted jobstore.JobDir
	var gates atomic.Int32
	w, err := jobstore.NewWorker(root, func(ctx context.Context, run *jobstore.Run) error {
		if run.Dir() == first {
			// Submitted while this handler runs, after the Worker's free
			// slot found nothing: it looks again once the handler returns.
			time.Sleep(3 * workerScan)
			submitted = submitKind(t, root, jobstore.JobSpec{ID: "c-submitted"})
		}
		return nil
	}, jobstore.WithUntilIdle(), jobstore.WithParallel(2), jobstore.WithStartOptions(jobstore.WithScanInterval(time.Hour)),
		jobstore.WithTakeGate(func(context.Context) error { gates.Add(1); return nil }))
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- w.Run(context.Background()) }()
	select {
	case err = <-done:
	case <-time.After(waitGuard):
		t.Fatal("Run did not return once idle")
	}
	require.NoError(t, err)
	assert.Equal(t, jobstore.Succeeded, readStatus(t, first).State)
	assert.Equal(t, jobstore.Succeeded, readStatus(t, submitted).State, "a job submitted while a handler ran is run")
	assert.Equal(t, jobstore.Queued, readStatus(t, later).State, "a job not yet due is left queued")
	assert.Equal(t, int32(3), gates.Load(), "the gate, once per job taken and once before the last look; not again for a look that found nothing while a handler ran")
}

func TestWorker_StopAndCancelPutsTheRunningJobBackAtOnce(t *testing.T) {
	root := tempDir(t)
	dir := submitKind(t, root, jobstore.JobSpec{MaxAttempts: 1})
	other := submitKind(t, root, jobstore.JobSpec{ID: "z-other"})
	started := make(chan struct{})
	causes := make(chan error, 1)
	w, err := jobstore.NewWorker(root, func(ctx context.Context, run *jobstore.Run) error {
		close(started)
		<-ctx.Done()
		causes <- context.Cause(ctx)
		return errors.New("stopped half way")
	}, jobstore.WithGrace(time.Hour), jobstore.WithStartOptions(jobstore.WithScanInterval(workerScan)))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	<-started
	cancel() // the grace (an hour) begins
	w.StopAndCancel()
	w.StopAndCancel() // twice is once
	select {
	case err = <-done:
	case <-time.After(waitGuard):
		t.Fatal("Run did not return after StopAndCancel")
	}
	require.NoError(t, err)
	require.ErrorIs(t, <-causes, jobstore.ErrWorkerStopped, "the handler can tell why its context ended")
	st := readStatus(t, dir)
	assert.Equal(t, jobstore.Queued, st.State, "interrupted, not failed, though it had one attempt")
	require.Len(t, st.Attempts, 1)
	assert.True(t, st.Attempts[0].Interrupted)
	assert.Contains(t, st.Attempts[0].Error, "stopped half way")
	assert.Equal(t, jobstore.Queued, readStatus(t, other).State, "no job is taken after StopAndCancel")
	require.NoError(t, w.Run(context.Background()), "a Worker stopped so runs no more")
	assert.Equal(t, jobstore.Queued, readStatus(t, other).State)
}

// The message of a job a cancel request stopped says who asked and why,
// whatever the handler returned, and never the request's remedy for Go
// callers (Finish(...)), which readers of the record cannot act on.
func TestWorker_ACancelledJobsMessageNamesTheRequestNotAGoRemedy(t *testing.T) {
	for _, tc := range []struct {
		name    string
		returns func(ctx context.Context) error
		says    string // besides the request
	}{
		{"the context's cause", func(ctx context.Context) error { return context.Cause(ctx) }, ""},
		{"the cause, wrapped", func(ctx context.Context) error { return fmt.Errorf("frame 3: %w", context.Cause(ctx)) }, ""},
		{"the context's error", func(ctx context.Context) error { return ctx.Err() }, ""},
		{"an error of its own", func(context.Context) error { return errors.New("left frame 3 half drawn") }, "left frame 3 half drawn"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := tempDir(t)
			dir := submitKind(t, root, jobstore.JobSpec{})
			started := make(chan struct{})
			stop := runWorker(t, root, func(ctx context.Context, run *jobstore.Run) error {
				close(started)
				<-ctx.Done()
				return tc.returns(ctx)
			})
			<-started
			require.NoError(t, jobstore.RequestCancel(dir, jobstore.CancelRequest{RequestedBy: "ana", Reason: "wrong scene"}))
			st := waitState(t, dir, jobstore.Cancelled, jobstore.Failed, jobstore.Queued)
			require.NoError(t, stop())
			require.Equal(t, jobstore.Cancelled, st.State)
			assert.Contains(t, st.Message, `"ana"`)
			assert.Contains(t, st.Message, `"wrong scene"`)
			assert.Contains(t, st.Message, tc.says)
			assert.NotContains(t, st.Message, "Remedy")
			assert.NotContains(t, st.Message, "Finish(")
		})
	}
}

// TestWorker_RecordsTheHostIdentityItWasMadeWith: a Worker made without
// WithHost records HostID() as NewWorker read it, in every run, even once
// the environment names another host; WithHost among its start options wins.
func TestWorker_RecordsTheHostIdentityItWasMadeWith(t *testing.T) {
	tests := []struct {
		name string
		opts []jobstore.WorkerOption
		want string
	}{
		{"from the environment when made", nil, "host-when-made"},
		{"WithHost", []jobstore.WorkerOption{jobstore.WithStartOptions(jobstore.WithHost("given"))}, "given"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := tempDir(t)
			dir := submitKind(t, root, jobstore.JobSpec{ID: "a-host"})
			t.Setenv(jobstore.HostEnv, "host-when-made")
			w, err := jobstore.NewWorker(root, func(context.Context, *jobstore.Run) error { return nil },
				append(tt.opts, jobstore.WithUntilIdle())...)
			require.NoError(t, err)
			t.Setenv(jobstore.HostEnv, "host-after")
			require.NoError(t, w.Run(context.Background()))
			st, err := jobstore.ReadStatus(dir)
			require.NoError(t, err)
			require.Equal(t, jobstore.Succeeded, st.State)
			require.Equal(t, tt.want, st.Host)
		})
	}
}
