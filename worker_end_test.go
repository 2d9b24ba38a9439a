package jobstore_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// shortTimeout is the timeout of the jobs whose handlers outlive it.
const shortTimeout = 100 * time.Millisecond

// A handler that ignores its context and returns nil after the job's
// timeout passed ran past its timeout: the attempt failed, timed out.
func TestWorker_AHandlerReturningNilPastItsTimeoutTimedOut(t *testing.T) {
	root := tempDir(t)
	dir := submitKind(t, root, jobstore.JobSpec{Timeout: shortTimeout, MaxAttempts: 1})
	stop := runWorker(t, root, func(ctx context.Context, run *jobstore.Run) error {
		<-ctx.Done()
		time.Sleep(shortTimeout) // ignores it, then claims success
		return nil
	})
	st := waitState(t, dir, jobstore.Succeeded, jobstore.Failed)
	require.NoError(t, stop())
	assert.Equal(t, jobstore.Failed, st.State, "a handler past its timeout did not succeed")
	assert.Contains(t, st.Error, "timed out")
	assert.Equal(t, 1, strings.Count(st.Error, "timed out"), "said once: %q", st.Error)
}

// Run.Finish(Succeeded) once the run's timeout passed writes failed, timed
// out, as its Context's end says; before it, succeeded.
func TestRun_FinishSucceededPastTheTimeoutIsTimedOut(t *testing.T) {
	tests := []struct {
		name    string
		timeout time.Duration
		wait    bool
		want    jobstore.State
	}{
		{"within its timeout", time.Hour, false, jobstore.Succeeded},
		{"past its timeout", shortTimeout, true, jobstore.Failed},
		{"no timeout", 0, false, jobstore.Succeeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := submitKind(t, tempDir(t), jobstore.JobSpec{Timeout: tt.timeout})
			r, err := jobstore.Start(dir)
			require.NoError(t, err)
			t.Cleanup(func() { _ = r.Close() })
			if tt.wait {
				<-r.Context().Done()
				require.ErrorIs(t, context.Cause(r.Context()), context.DeadlineExceeded)
			}
			require.NoError(t, r.Finish(jobstore.Outcome{State: jobstore.Succeeded}))
			st := readStatus(t, dir)
			assert.Equal(t, tt.want, st.State)
			if tt.want == jobstore.Failed {
				assert.Contains(t, st.Error, "timed out")
			}
		})
	}
}

// logRecords is a slog.Handler that keeps every record.
type logRecords struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (h *logRecords) Enabled(context.Context, slog.Level) bool { return true }
func (h *logRecords) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.recs = append(h.recs, r.Clone())
	return nil
}
func (h *logRecords) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *logRecords) WithGroup(string) slog.Handler      { return h }

// ended returns the level and "error" attribute of the "ended" records.
func (h *logRecords) ended() (levels []slog.Level, errs []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range h.recs {
		if r.Message != "ended" {
			continue
		}
		levels = append(levels, r.Level)
		var e string
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "error" {
				e = a.Value.String()
			}
			return true
		})
		errs = append(errs, e)
	}
	return levels, errs
}

// The Worker's line for an attempt that failed says why, at WARN, whether
// the job is retried or not; one that succeeded, at INFO, without error.
func TestWorker_LogsAFailedAttemptsErrorAtWarn(t *testing.T) {
	root := tempDir(t)
	dir := submitKind(t, root, jobstore.JobSpec{MaxAttempts: 3, Backoff: 10 * time.Millisecond, MaxBackoff: 10 * time.Millisecond})
	var calls int
	logs := &logRecords{}
	stop := runWorker(t, root, func(ctx context.Context, run *jobstore.Run) error {
		calls++
		if calls < 3 {
			return fmt.Errorf("boom %d", calls)
		}
		return nil
	}, jobstore.WithLogger(slog.New(logs)))
	waitState(t, dir, jobstore.Succeeded)
	require.NoError(t, stop())
	levels, errs := logs.ended()
	require.Equal(t, []slog.Level{slog.LevelWarn, slog.LevelWarn, slog.LevelInfo}, levels, "errors: %q", errs)
	assert.Equal(t, []string{"boom 1", "boom 2", ""}, errs)
}

// A handler that returns its context's cause (or wraps it) has it said
// once, in the record and in the log.
func TestWorker_AHandlerReturningItsContextsCauseIsSaidOnce(t *testing.T) {
	tests := []struct {
		name string
		ret  func(ctx context.Context) error
		want string // in the attempt's error, once
	}{
		{"the cause", func(ctx context.Context) error { return context.Cause(ctx) }, "the worker stopped before the job ended"},
		{"wrapping the cause", func(ctx context.Context) error { return fmt.Errorf("step 3: %w", context.Cause(ctx)) }, "step 3: the worker stopped before the job ended"},
		{"another error", func(ctx context.Context) error { return errors.New("half done") }, "the worker stopped before the job ended; the handler returned: half done"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := tempDir(t)
			dir := submitKind(t, root, jobstore.JobSpec{})
			started := make(chan struct{})
			logs := &logRecords{}
			w, err := jobstore.NewWorker(root, func(ctx context.Context, run *jobstore.Run) error {
				close(started)
				<-ctx.Done()
				return tt.ret(ctx)
			}, jobstore.WithLogger(slog.New(logs)), jobstore.WithStartOptions(jobstore.WithScanInterval(workerScan)))
			require.NoError(t, err)
			done := make(chan error, 1)
			go func() { done <- w.Run(context.Background()) }()
			<-started
			w.StopAndCancel()
			require.NoError(t, <-done)
			st := readStatus(t, dir)
			require.Len(t, st.Attempts, 1)
			assert.Equal(t, tt.want, st.Attempts[0].Error)
			assert.Equal(t, 1, strings.Count(st.Attempts[0].Error, "the worker stopped"), "%q", st.Attempts[0].Error)
			_, errs := logs.ended()
			assert.Equal(t, []string{tt.want}, errs)
		})
	}
}
