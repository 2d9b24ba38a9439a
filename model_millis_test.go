package jobstore_test

import (
	"errors"
	"math"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A count of milliseconds that a time.Duration cannot hold must be refused
// naming its field, wherever it is read: multiplied into a Duration it
// wraps, and 18446744073710 ms of backoff becomes 448µs (every retry back
// to back) or a timeout of 448µs.
func TestRead_MillisecondsADurationCannotHoldAreRefusedNamingTheField(t *testing.T) {
	const largest = math.MaxInt64 / int64(time.Millisecond)
	const ts = `"2026-11-30T09:00:00+00:00"`
	spec := func(field string, ms int64) string {
		return `{"schema_version":2,"job_id":"j1","kind":"k","submitted_at":` + ts + `,"` + field + `":` + strconv.FormatInt(ms, 10) + `}`
	}
	status := func(ms int64) string {
		return `{"schema_version":2,"job_id":"j1","state":"running","seq":2,"updated_at":` + ts + `,"attempt":1,"lease_ms":` + strconv.FormatInt(ms, 10) + `}`
	}
	tests := []struct {
		name, field string
		ms          int64
		refused     bool
	}{
		{"backoff wraps to 448µs", "backoff_ms", 18446744073710, true},
		{"backoff one past the largest", "backoff_ms", largest + 1, true},
		{"backoff far negative", "backoff_ms", -largest - 1, true},
		{"max_backoff wraps", "max_backoff_ms", 18446744073710, true},
		{"timeout wraps to 448µs", "timeout_ms", 18446744073710, true},
		{"timeout the largest", "timeout_ms", largest, false},
		{"lease wraps", "lease_ms", 18446744073710, true},
		{"lease the largest", "lease_ms", largest, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := newJobDir(t, "j1")
			require.NoError(t, os.MkdirAll(string(dir), 0o755))
			var err error
			if tt.field == "lease_ms" {
				require.NoError(t, jobstore.WriteSpec(dir, jobstore.JobSpec{ID: "j1", Kind: "k", SubmittedAt: submitted}))
				require.NoError(t, os.WriteFile(dir.StatusPath(), []byte(status(tt.ms)), 0o644))
				var st *jobstore.JobStatus
				st, err = jobstore.ReadStatus(dir)
				if !tt.refused {
					require.NoError(t, err)
					assert.Equal(t, time.Duration(tt.ms)*time.Millisecond, st.Lease)
				}
			} else {
				require.NoError(t, os.WriteFile(dir.SpecPath(), []byte(spec(tt.field, tt.ms)), 0o644))
				var s jobstore.JobSpec
				s, err = jobstore.ReadSpec(dir)
				if !tt.refused {
					require.NoError(t, err)
					assert.Equal(t, time.Duration(tt.ms)*time.Millisecond, s.Timeout)
				}
				_, _, derr := jobstore.DecodeSpec([]byte(spec(tt.field, tt.ms)))
				assert.Equal(t, tt.refused, derr != nil, "DecodeSpec: %v", derr)
			}
			if !tt.refused {
				return
			}
			require.ErrorIs(t, err, jobstore.ErrInvalid)
			var e *jobstore.Error
			require.True(t, errors.As(err, &e), "%v", err)
			assert.Equal(t, tt.field, e.Subject, "%v", err)
			assert.Equal(t, tt.ms, e.Found)
			assert.Contains(t, err.Error(), tt.field)
		})
	}
}

// A spec with such a backoff is not started: Start reads it and refuses.
func TestStart_RefusesASpecWhoseBackoffOverflows(t *testing.T) {
	dir := newJobDir(t, "j1")
	require.NoError(t, os.MkdirAll(string(dir), 0o755))
	require.NoError(t, os.WriteFile(dir.SpecPath(), []byte(`{"schema_version":2,"job_id":"j1","kind":"k","submitted_at":"2026-11-30T09:00:00+00:00","max_attempts":5,"backoff_ms":18446744073710}`), 0o644))
	run, err := jobstore.Start(dir)
	t.Cleanup(func() { _ = run.Close() })
	require.ErrorIs(t, err, jobstore.ErrInvalid)
	var e *jobstore.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, "backoff_ms", e.Subject)
}
