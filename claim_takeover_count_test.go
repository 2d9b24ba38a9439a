package jobstore_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Timing of the takeover tests.
const (
	// releaseDeadline bounds how long a killed runner's job.lock may stay
	// held after it was reaped (Windows releases it a moment later).
	releaseDeadline = 10 * time.Second
	// releasePoll is how often a test tries again meanwhile.
	releasePoll = 20 * time.Millisecond
	// tinyBackoff makes a retry due almost at once.
	tinyBackoff = time.Millisecond
	// endDeadline bounds how long a Worker may take to end a job.
	endDeadline = 20 * time.Second
)

// killedRunner starts dir's job in a child process (its next attempt) and
// SIGKILLs it before it finishes: a runner that died between Start and
// Finish.
func killedRunner(t *testing.T, dir jobstore.JobDir) {
	t.Helper()
	runner := startRole(t, cancelHolderRole, dirEnv+"="+string(dir))
	require.Equal(t, "started "+strconv.Itoa(runner.cmd.Process.Pid), runner.line(t))
	require.NoError(t, runner.cmd.Process.Kill())
	_ = runner.cmd.Wait() // killed: the error says so
	st := readStatus(t, dir)
	require.Equal(t, jobstore.Running, st.State, "the killed runner's record still says running")
}

// startTakingOver is Start of a job whose runner was killed, tried again
// while the killed process's lock lingers (ErrLocked).
func startTakingOver(t *testing.T, dir jobstore.JobDir) (*jobstore.Run, error) {
	t.Helper()
	deadline := time.Now().Add(releaseDeadline)
	for {
		r, err := jobstore.Start(dir)
		if !errors.Is(err, jobstore.ErrLocked) || !time.Now().Before(deadline) {
			if r != nil {
				t.Cleanup(func() { _ = r.Close() })
			}
			return r, err
		}
		time.Sleep(releasePoll)
	}
}

// requireLostFirst checks that st's attempts begin with attempt 1 ended
// lost, counted (not interrupted).
func requireLostFirst(t *testing.T, st jobstore.JobStatus) {
	t.Helper()
	require.NotEmpty(t, st.Attempts, "the killed attempt must be kept")
	assert.EqualValues(t, 1, st.Attempts[0].Attempt)
	assert.Equal(t, jobstore.Lost, st.Attempts[0].State)
	assert.False(t, st.Attempts[0].Interrupted)
}

// A Start that takes over a killed runner's job (its own look said
// queued, or it is just the next Start) ends the killed attempt lost and
// counts it: the job runs again only while attempts remain, and only once
// its backoff has passed.
func TestStart_TakeoverCountsTheKilledAttemptAndHonoursItsBackoff(t *testing.T) {
	tests := []struct {
		name  string
		spec  jobstore.JobSpec
		check func(t *testing.T, dir jobstore.JobDir, r *jobstore.Run, err error)
	}{
		{"one attempt: the job ends lost and never runs again", jobstore.JobSpec{Kind: "k", MaxAttempts: 1},
			func(t *testing.T, dir jobstore.JobDir, r *jobstore.Run, err error) {
				require.ErrorIs(t, err, jobstore.ErrWrongState)
				st := readStatus(t, dir)
				assert.Equal(t, jobstore.Lost, st.State)
				_, err = jobstore.Start(dir)
				require.ErrorIs(t, err, jobstore.ErrWrongState, "a lost job is not started again")
			}},
		{"attempts left: queued again after the backoff", jobstore.JobSpec{Kind: "k", MaxAttempts: 3, Backoff: time.Hour},
			func(t *testing.T, dir jobstore.JobDir, r *jobstore.Run, err error) {
				require.ErrorIs(t, err, jobstore.ErrNotDue, "the backoff of the lost attempt applies")
				st := readStatus(t, dir)
				assert.Equal(t, jobstore.Queued, st.State)
				require.NotNil(t, st.RetryAt)
				assert.True(t, st.RetryAt.After(time.Now().Add(time.Hour/2-time.Minute)), "retry_at %v", st.RetryAt)
				requireLostFirst(t, st)
			}},
		{"attempts left, tiny backoff: the run counts the lost attempt", jobstore.JobSpec{Kind: "k", MaxAttempts: 2, Backoff: tinyBackoff, MaxBackoff: tinyBackoff},
			func(t *testing.T, dir jobstore.JobDir, r *jobstore.Run, err error) {
				if errors.Is(err, jobstore.ErrNotDue) {
					time.Sleep(2 * tinyBackoff)
					r, err = startTakingOver(t, dir)
				}
				require.NoError(t, err)
				requireLostFirst(t, r.Status())
				require.NoError(t, r.Finish(jobstore.Outcome{State: jobstore.Failed, Error: "boom"}))
				st := readStatus(t, dir)
				assert.Equal(t, jobstore.Failed, st.State, "the lost attempt and this one are the job's 2 attempts")
				require.Len(t, st.Attempts, 2)
				assert.Equal(t, jobstore.Failed, st.Attempts[1].State)
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, err := jobstore.Submit(tempDir(t), tt.spec)
			require.NoError(t, err)
			killedRunner(t, dir)
			r, err := startTakingOver(t, dir)
			tt.check(t, dir, r, err)
		})
	}
}

// Reconcile's takeover counts the killed attempt the same way.
func TestReconcile_TakeoverCountsTheKilledAttempt(t *testing.T) {
	tests := []struct {
		name  string
		spec  jobstore.JobSpec
		state jobstore.State
	}{
		{"one attempt", jobstore.JobSpec{Kind: "k", MaxAttempts: 1}, jobstore.Lost},
		{"attempts left", jobstore.JobSpec{Kind: "k", MaxAttempts: 2, Backoff: time.Hour}, jobstore.Queued},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, err := jobstore.Submit(tempDir(t), tt.spec)
			require.NoError(t, err)
			killedRunner(t, dir)
			deadline := time.Now().Add(releaseDeadline)
			for {
				changed, err := jobstore.Reconcile(dir)
				require.NoError(t, err)
				if changed {
					break
				}
				require.True(t, time.Now().Before(deadline), "the killed runner's lock was never released")
				time.Sleep(releasePoll)
			}
			st := readStatus(t, dir)
			assert.Equal(t, tt.state, st.State)
			if tt.spec.MaxAttempts > 1 {
				requireLostFirst(t, st)
			}
			_, err = jobstore.Start(dir)
			require.Error(t, err, "the job may not run at once: it ended, or its backoff runs")
		})
	}
}

// A Worker that finds a killed runner's job (by its take or its rescue)
// runs it only for the attempts the lost one left: with two attempts, its
// handler runs once; with one, never.
func TestWorker_TakeoverOfAKilledRunnerCountsItsAttempt(t *testing.T) {
	tests := []struct {
		name  string
		max   int
		calls int32
		state jobstore.State
	}{
		{"one attempt: never run again", 1, 0, jobstore.Lost},
		{"two attempts: run once more", 2, 1, jobstore.Failed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := tempDir(t)
			dir, err := jobstore.Submit(root, jobstore.JobSpec{Kind: "k", MaxAttempts: tt.max, Backoff: tinyBackoff, MaxBackoff: tinyBackoff})
			require.NoError(t, err)
			killedRunner(t, dir)
			var calls atomic.Int32
			w, err := jobstore.NewWorker(root, func(ctx context.Context, run *jobstore.Run) error {
				calls.Add(1)
				return errors.New("boom")
			}, jobstore.WithStartOptions(jobstore.WithScanInterval(50*time.Millisecond)))
			require.NoError(t, err)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- w.Run(ctx) }()
			stop := sync.OnceValue(func() error { cancel(); return <-done })
			t.Cleanup(func() { _ = stop() })
			deadline := time.Now().Add(endDeadline)
			for !readStatus(t, dir).State.Terminal() {
				require.True(t, time.Now().Before(deadline), "the worker never ended the job: %+v", readStatus(t, dir))
				time.Sleep(releasePoll)
			}
			require.NoError(t, stop())
			st := readStatus(t, dir)
			assert.Equal(t, tt.state, st.State)
			assert.Equal(t, tt.calls, calls.Load(), "handler runs")
			if tt.max > 1 {
				requireLostFirst(t, st)
				assert.Len(t, st.Attempts, tt.max)
			}
		})
	}
}
