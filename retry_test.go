package jobstore_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// retryBackoff is the first retry delay of the jobs these tests submit:
// short, so that a test waits for it, long enough that "not yet due" is
// seen before it passes.
const retryBackoff = 300 * time.Millisecond

// submitRetried submits a job of kind "test" with maxAttempts and
// retryBackoff under a fresh root.
func submitRetried(t *testing.T, maxAttempts int) jobstore.JobDir {
	t.Helper()
	dir, err := jobstore.Submit(tempDir(t), jobstore.JobSpec{Kind: "test", MaxAttempts: maxAttempts,
		Backoff: retryBackoff, MaxBackoff: 4 * retryBackoff})
	require.NoError(t, err)
	return dir
}

// failAttempt starts dir once it is due (waiting for it through StartNext)
// and finishes the attempt failed with why; it returns the status written.
func failAttempt(t *testing.T, dir jobstore.JobDir, why string) jobstore.JobStatus {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*retryBackoff)
	defer cancel()
	r, err := jobstore.StartNext(ctx, filepath.Dir(string(dir)))
	require.NoError(t, err)
	require.NoError(t, r.Finish(jobstore.Outcome{State: jobstore.Failed, Error: why, ExitCode: ptr(2)}))
	st := r.Status()
	require.NoError(t, r.Close())
	return st
}

func TestFinish_FailedWithAttemptsLeftIsQueuedAgainAfterItsBackoff(t *testing.T) {
	dir := submitRetried(t, 3)

	before := jobstore.Now()
	st := failAttempt(t, dir, "the licence server did not answer")
	assert.Equal(t, jobstore.Queued, st.State, "a failed attempt with attempts left puts the job back")
	require.NotNil(t, st.RetryAt)
	assert.WithinRange(t, *st.RetryAt, before.Add(retryBackoff/2), jobstore.Now().Add(retryBackoff))
	require.Len(t, st.Attempts, 1)
	a := st.Attempts[0]
	assert.Equal(t, jobstore.Failed, a.State)
	assert.Equal(t, uint64(1), a.Attempt)
	assert.Equal(t, "the licence server did not answer", a.Error)
	assert.Equal(t, ptr(2), a.ExitCode)
	assert.NotNil(t, a.StartedAt)
	assert.Contains(t, st.Message, "the licence server did not answer")
	assert.Contains(t, string(readFile(t, dir.StatusPath())), `"schema_version": 2,`)

	_, err := jobstore.Start(dir)
	assert.ErrorIs(t, err, jobstore.ErrNotDue, "the retry is not started before retry_at")
	assert.Equal(t, jobstore.CodeNotDue, jobstore.ErrorCode(err))
	assert.Equal(t, st, readStatus(t, dir), "a refused Start writes nothing")

	// The second attempt fails later: the delay doubles (with jitter, in
	// its upper half).
	second := failAttempt(t, dir, "again")
	assert.False(t, jobstore.Now().Before(*st.RetryAt), "StartNext started it no earlier than retry_at")
	require.NotNil(t, second.RetryAt)
	assert.Len(t, second.Attempts, 2)

	// The third is the last: the job ends failed, with every attempt kept.
	last := failAttempt(t, dir, "for good")
	assert.Equal(t, jobstore.Failed, last.State)
	assert.Nil(t, last.RetryAt)
	require.Len(t, last.Attempts, 3)
	for i, a := range last.Attempts {
		assert.Equal(t, uint64(i+1), a.Attempt)
		assert.Equal(t, jobstore.Failed, a.State)
	}
	assert.Equal(t, "for good", last.Error)
}

func TestFinish_OneAttemptIsTodaysRecord(t *testing.T) {
	dir := submitJob(t, "")
	st := failAttempt(t, dir, "boom")
	assert.Equal(t, jobstore.Failed, st.State)
	assert.Empty(t, st.Attempts, "a job without retries keeps no attempts list")
	assert.Contains(t, string(readFile(t, dir.StatusPath())), `"schema_version": 1,`, "and is written as version 1")
}

func TestFinish_ACancelRequestStopsRetries(t *testing.T) {
	dir := submitRetried(t, 5)
	r, err := jobstore.Start(dir)
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.Close() })
	require.NoError(t, jobstore.RequestCancel(dir, jobstore.CancelRequest{RequestedBy: "ana"}))
	require.NoError(t, r.Finish(jobstore.Outcome{State: jobstore.Failed, Error: "stopped half way"}))
	st := readStatus(t, dir)
	assert.Equal(t, jobstore.Failed, st.State, "no retry once a cancel was asked for")
	assert.Nil(t, st.RetryAt)
	require.Len(t, st.Attempts, 1)
}

func TestReconcile_LostWithAttemptsLeftIsQueuedAgain(t *testing.T) {
	dir := submitRetried(t, 2)
	r, err := jobstore.Start(dir)
	require.NoError(t, err)
	require.NoError(t, r.Progress(0.5, "half"))
	prev := r.Status()
	require.NoError(t, r.Close()) // the runner goes away without a final state

	changed, err := jobstore.Reconcile(dir)
	require.NoError(t, err)
	assert.True(t, changed)
	st := readStatus(t, dir)
	assert.Equal(t, jobstore.Queued, st.State)
	require.NotNil(t, st.RetryAt)
	require.Len(t, st.Attempts, 1)
	assert.Equal(t, jobstore.Lost, st.Attempts[0].State)
	assert.Equal(t, prev.Attempt, st.Attempts[0].Attempt, "the attempt judged gone, not the reconciler's")
	assert.Greater(t, st.Attempt, prev.Attempt)
	assert.Nil(t, st.StartedAt, "what ran is cleared")
	assert.Nil(t, st.Progress)

	// The next attempt is lost too: that was the last.
	ctx, cancel := context.WithTimeout(context.Background(), 10*retryBackoff)
	defer cancel()
	r, err = jobstore.StartNext(ctx, filepath.Dir(string(dir)))
	require.NoError(t, err)
	assert.Len(t, r.Status().Attempts, 1, "the running record carries the attempts")
	require.NoError(t, r.Close())
	changed, err = jobstore.Reconcile(dir)
	require.NoError(t, err)
	assert.True(t, changed)
	st = readStatus(t, dir)
	assert.Equal(t, jobstore.Lost, st.State)
	assert.Len(t, st.Attempts, 2)
}

func TestRetry_GivesAFinishedJobOneMoreAttempt(t *testing.T) {
	dir := submitJob(t, "")
	first := failAttempt(t, dir, "disk full")
	require.Equal(t, jobstore.Failed, first.State)

	require.NoError(t, jobstore.Retry(dir))
	st := readStatus(t, dir)
	assert.Equal(t, jobstore.Queued, st.State)
	assert.Nil(t, st.RetryAt, "due at once")
	assert.Equal(t, first.Seq+1, st.Seq)
	require.Len(t, st.Attempts, 1)
	assert.Equal(t, "disk full", st.Attempts[0].Error)

	second := failAttempt(t, dir, "disk still full")
	assert.Equal(t, jobstore.Failed, second.State, "one attempt more, not a new budget")
	assert.Len(t, second.Attempts, 2)

	err := jobstore.Retry(dir)
	require.NoError(t, err, "a job may be retried by hand again")
}

func TestRetry_RefusesAJobThatIsNotFailedLostOrCancelled(t *testing.T) {
	queued := submitJob(t, "")
	before := snapshot(t, string(queued))
	err := jobstore.Retry(queued)
	assert.ErrorIs(t, err, jobstore.ErrWrongState)
	assert.Equal(t, "state", errOf(t, err).Subject)
	assert.Equal(t, before, snapshot(t, string(queued)), "nothing written")

	running := submitJob(t, "")
	r, err := jobstore.Start(running)
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.Close() })
	err = jobstore.Retry(running)
	assert.ErrorIs(t, err, jobstore.ErrWrongState)
	assert.ErrorContains(t, err, "the job is running")

	done := submitJob(t, "")
	r2, err := jobstore.Start(done)
	require.NoError(t, err)
	require.NoError(t, r2.Finish(jobstore.Outcome{State: jobstore.Succeeded}))
	require.NoError(t, r2.Close())
	err = jobstore.Retry(done)
	assert.ErrorIs(t, err, jobstore.ErrWrongState)
	assert.Equal(t, jobstore.Succeeded, readStatus(t, done).State)
}

func TestRetry_ACancelledJobLosesItsRequest(t *testing.T) {
	dir := submitJob(t, "")
	require.NoError(t, jobstore.RequestCancel(dir, jobstore.CancelRequest{RequestedBy: "ana"}))
	_, err := jobstore.Start(dir) // marks it cancelled
	require.ErrorIs(t, err, jobstore.ErrCancelRequested)
	require.Equal(t, jobstore.Cancelled, readStatus(t, dir).State)

	require.NoError(t, jobstore.Retry(dir))
	_, err = os.Lstat(dir.CancelPath())
	assert.ErrorIs(t, err, os.ErrNotExist)
	r, err := jobstore.Start(dir)
	require.NoError(t, err, "the job runs again")
	require.NoError(t, r.Close())
}

func TestRetry_RacingCallsAddOneAttempt(t *testing.T) {
	for round := range 20 {
		dir := submitJob(t, "")
		first := failAttempt(t, dir, "boom")
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for i := range errs {
			wg.Go(func() { errs[i] = jobstore.Retry(dir) })
		}
		wg.Wait()
		won := 0
		for _, err := range errs {
			if err == nil {
				won++
				continue
			}
			assert.True(t, errors.Is(err, jobstore.ErrLocked) || errors.Is(err, jobstore.ErrWrongState), "round %d: %v", round, err)
		}
		assert.Equal(t, 1, won, "round %d", round)
		st := readStatus(t, dir)
		assert.Equal(t, first.Seq+1, st.Seq, "round %d: one record added", round)
		assert.Len(t, st.Attempts, 1)
	}
}

func TestStartNext_WaitsForNotBeforeAndTakesHigherPriorityFirst(t *testing.T) {
	root := tempDir(t)
	due := jobstore.Now().Add(2 * retryBackoff)
	submit := func(id string, prio int, notBefore time.Time) {
		_, err := jobstore.Submit(root, jobstore.JobSpec{ID: id, Kind: "test", Priority: prio, NotBefore: notBefore})
		require.NoError(t, err)
	}
	submit("a-old-low", 0, time.Time{})
	submit("b-later", 5, due)
	submit("c-high", 5, time.Time{})
	submit("d-mid", 2, time.Time{})

	var order []string
	for range 3 {
		r, err := jobstore.StartNext(context.Background(), root)
		require.NoError(t, err)
		order = append(order, r.Dir().ID())
		require.NoError(t, r.Close())
	}
	assert.Equal(t, []string{"c-high", "d-mid", "a-old-low"}, order, "higher priority first, then the oldest; b-later is not due")

	ctx, cancel := context.WithTimeout(context.Background(), 10*retryBackoff)
	defer cancel()
	r, err := jobstore.StartNext(ctx, root)
	require.NoError(t, err)
	assert.Equal(t, "b-later", r.Dir().ID())
	assert.False(t, jobstore.Now().Before(due), "started no earlier than not_before")
	require.NoError(t, r.Close())
}

func TestRun_ContextEndsAtTheJobsTimeout(t *testing.T) {
	dir, err := jobstore.Submit(tempDir(t), jobstore.JobSpec{Kind: "test", Timeout: retryBackoff})
	require.NoError(t, err)
	r, err := jobstore.Start(dir)
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.Close() })
	ctx := r.Context()
	select {
	case <-ctx.Done():
	case <-time.After(20 * retryBackoff):
		t.Fatal("the run's context did not end at the job's timeout")
	}
	cause := context.Cause(ctx)
	assert.ErrorIs(t, cause, context.DeadlineExceeded)
	assert.ErrorContains(t, cause, "timed out")
	assert.False(t, jobstore.Now().Before(r.Status().StartedAt.Add(retryBackoff)), "not before started_at + timeout")
}

// DueAt is when StartNext would start a queued job: the later of
// not_before and a pending retry's retry_at, nothing for another state.
func TestDueAt_IsTheLaterOfNotBeforeAndRetryAt(t *testing.T) {
	early := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	late := early.Add(time.Hour)
	tests := []struct {
		name  string
		spec  *jobstore.JobSpec
		st    *jobstore.JobStatus
		due   time.Time
		retry bool
	}{
		{"no status, no not_before: at once", &jobstore.JobSpec{}, nil, time.Time{}, false},
		{"no status, not_before", &jobstore.JobSpec{NotBefore: late}, nil, late, false},
		{"no spec, a retry pending", nil, &jobstore.JobStatus{State: jobstore.Queued, RetryAt: &late}, late, true},
		{"retry_at later than not_before", &jobstore.JobSpec{NotBefore: early}, &jobstore.JobStatus{State: jobstore.Queued, RetryAt: &late}, late, true},
		{"not_before later than retry_at", &jobstore.JobSpec{NotBefore: late}, &jobstore.JobStatus{State: jobstore.Queued, RetryAt: &early}, late, false},
		{"running: not due, it runs", &jobstore.JobSpec{NotBefore: late}, &jobstore.JobStatus{State: jobstore.Running}, time.Time{}, false},
		{"failed: nothing pending", &jobstore.JobSpec{NotBefore: late}, &jobstore.JobStatus{State: jobstore.Failed, RetryAt: &late}, time.Time{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			due, retry := jobstore.DueAt(tt.spec, tt.st)
			assert.True(t, tt.due.Equal(due), "due %v, want %v", due, tt.due)
			assert.Equal(t, tt.retry, retry)
		})
	}
}
