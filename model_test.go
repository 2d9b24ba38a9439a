package jobstore_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestState_KnownAndTerminal(t *testing.T) {
	tests := []struct {
		s               jobstore.State
		known, terminal bool
	}{
		{jobstore.Queued, true, false},
		{jobstore.Running, true, false},
		{jobstore.Succeeded, true, true},
		{jobstore.Failed, true, true},
		{jobstore.Cancelled, true, true},
		{jobstore.Lost, true, true},
		{"", false, false},
		{"done", false, false},
		{"Running", false, false},
		{"canceled", false, false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.known, tt.s.Known(), "%q known", tt.s)
		assert.Equal(t, tt.terminal, tt.s.Terminal(), "%q terminal", tt.s)
	}
	assert.Equal(t, []jobstore.State{"queued", "running", "succeeded", "failed", "cancelled", "lost"}, jobstore.States())
}

// isoformatUTC is how every timestamp is written: Python's isoformat() of an
// aware UTC datetime with microseconds. datetime.fromisoformat parses it on
// every Python from 3.7.
var isoformatUTC = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}\+00:00$`)

func TestTimestamps_WrittenInUTCWithMicrosecondsAndOffset(t *testing.T) {
	ist := time.FixedZone("IST", 5*3600+1800)
	tests := []struct {
		in   time.Time
		want string
	}{
		{time.Date(2026, 11, 30, 15, 5, 40, 123456789, ist), "2026-11-30T09:35:40.123456+00:00"},
		{time.Date(2026, 11, 30, 9, 35, 40, 0, time.UTC), "2026-11-30T09:35:40.000000+00:00"},
		{time.Date(2026, 11, 30, 9, 35, 40, 999, time.UTC), "2026-11-30T09:35:40.000000+00:00"},
		{time.Date(2026, 1, 1, 0, 30, 0, 0, ist), "2025-12-31T19:00:00.000000+00:00"},
		{time.Date(1, 1, 1, 0, 0, 1, 0, time.UTC), "0001-01-01T00:00:01.000000+00:00"}, // (0 is "not set")
		{time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC), "9999-12-31T23:59:59.999999+00:00"},
		{time.Now(), ""}, // with a monotonic reading: only the shape is checked
	}
	for _, tt := range tests {
		dir := newJob(t, "times")
		require.NoError(t, jobstore.WriteStatus(dir, jobstore.JobStatus{State: jobstore.Succeeded,
			UpdatedAt: tt.in, StartedAt: &tt.in, FinishedAt: &tt.in}))
		var raw map[string]any
		require.NoError(t, json.Unmarshal(readFile(t, dir.StatusPath()), &raw))
		for _, field := range []string{"updated_at", "started_at", "finished_at"} {
			s, _ := raw[field].(string)
			assert.Regexp(t, isoformatUTC, s, field)
			if tt.want != "" {
				assert.Equal(t, tt.want, s, field)
			}
		}
		st, err := jobstore.ReadStatus(dir)
		require.NoError(t, err)
		assert.True(t, st.UpdatedAt.Equal(tt.in.Truncate(time.Microsecond)), "%v reads back as %v", tt.in, st.UpdatedAt)
	}
	var spec map[string]any
	require.NoError(t, json.Unmarshal(readFile(t, newJob(t, "spec-time").SpecPath()), &spec))
	assert.Equal(t, "2026-11-30T09:35:40.123456+00:00", spec["submitted_at"])
}

// statusWithTime is a current status.json whose updated_at is ts (raw JSON).
func statusWithTime(ts string) []byte {
	return []byte(fmt.Sprintf(`{"schema_version": 1, "job_id": "j1", "state": "running", "seq": 1, "updated_at": %s}`, ts))
}

func TestTimestamps_ReadEveryRFC3339AndIsoformatForm(t *testing.T) {
	base := time.Date(2026, 11, 30, 9, 35, 40, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Time
	}{
		{"2026-11-30T09:35:40Z", base},
		{"2026-11-30T09:35:40+00:00", base},
		{"2026-11-30T09:35:40-00:00", base},
		{"2026-11-30T11:35:40+02:00", base},
		{"2026-11-30T04:05:40-05:30", base},
		{"2026-12-01T00:35:40+15:00", base},
		{"2026-11-30T09:35:40", base},
		{"2026-11-30 09:35:40", base},
		{"2026-11-30 09:35:40+00:00", base},
		{"2026-11-30 15:05:40.5+05:30", base.Add(500 * time.Millisecond)},
		{"2026-11-30T09:35:40.123456789Z", base.Add(123456 * time.Microsecond)},
		{"2026-11-30T09:35:40.999999999+00:00", base.Add(999999 * time.Microsecond)},
		{"0001-01-01T00:00:00+00:00", time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)},
		{"0001-01-01T01:00:00+01:00", time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)},
		{"9999-12-31T23:59:59.999999+00:00", time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC)},
	}
	// Every count of fractional digits from 0 to 9, with and without an offset.
	for digits := 0; digits <= 9; digits++ {
		frac, want := "", base
		if digits > 0 {
			frac = "." + "123456789"[:digits]
			var ns int
			fmt.Sscanf(("123456789"[:digits] + "000000000")[:9], "%d", &ns)
			want = base.Add(time.Duration(ns)).Truncate(time.Microsecond)
		}
		for _, suffix := range []string{"", "Z", "+00:00", "+01:00"} {
			w := want
			if suffix == "+01:00" {
				w = want.Add(-time.Hour)
			}
			tests = append(tests, struct {
				in   string
				want time.Time
			}{"2026-11-30T09:35:40" + frac + suffix, w})
		}
	}
	for _, tt := range tests {
		st, _, err := jobstore.DecodeStatus(statusWithTime(`"` + tt.in + `"`))
		if !assert.NoError(t, err, tt.in) {
			continue
		}
		assert.True(t, tt.want.Equal(st.UpdatedAt), "%s: got %v, want %v", tt.in, st.UpdatedAt, tt.want)
		assert.Equal(t, time.UTC, st.UpdatedAt.Location(), tt.in)
	}
}

func TestTimestamps_RefuseWhatIsNotAValidTime(t *testing.T) {
	for _, ts := range []string{
		`"yesterday"`, `""`, `"2026-11-30"`, `"09:35:40"`, `"2026-13-01T00:00:00Z"`, `"2026-11-31T00:00:00Z"`,
		`"2026-11-30T25:00:00Z"`, `"2026-11-30T09:35:60Z"`, `"2026-11-30T09:35:40 +00:00"`,
		`"2026-11-30X09:35:40Z"`, `" 2026-11-30T09:35:40Z"`, `1764495340`, `true`, `{}`, `["2026-11-30T09:35:40Z"]`,
		`"0000-12-31T23:00:00Z"`, `"10000-01-01T00:00:00Z"`, `"0001-01-01T00:30:00+01:00"`, `"9999-12-31T23:30:00-01:00"`,
	} {
		_, _, err := jobstore.DecodeStatus(statusWithTime(ts))
		assert.ErrorIs(t, err, jobstore.ErrInvalid, ts)
		var e *jobstore.Error
		if assert.ErrorAs(t, err, &e, ts) {
			assert.Equal(t, "updated_at", e.Subject, ts)
		}
	}
	// A JSON null is no time at all: the zero time, as when the field is missing.
	st, _, err := jobstore.DecodeStatus(statusWithTime(`null`))
	require.NoError(t, err)
	assert.True(t, st.UpdatedAt.IsZero())
}

// TestJSONNames_AreTheFileFormat pins the JSON names, which non-Go tools
// rely on, and which fields are left out when empty.
func TestJSONNames_AreTheFileFormat(t *testing.T) {
	keys := func(v any) []string {
		b, err := json.Marshal(v)
		require.NoError(t, err)
		var m map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(b, &m))
		var out []string
		for k := range m {
			out = append(out, k)
		}
		return out
	}
	started := submitted
	assert.ElementsMatch(t, []string{"schema_version", "job_id", "kind", "submitted_at"}, keys(jobstore.JobSpec{}))
	assert.ElementsMatch(t, []string{"schema_version", "job_id", "kind", "params", "submitted_at", "submitted_by", "labels"},
		keys(jobstore.JobSpec{Params: json.RawMessage(`{}`), SubmittedBy: "x", Labels: map[string]string{"a": "b"}}))
	assert.ElementsMatch(t, []string{"schema_version", "job_id", "state", "seq", "updated_at"}, keys(jobstore.JobStatus{}))
	assert.ElementsMatch(t, []string{"schema_version", "job_id", "state", "seq", "progress", "message", "updated_at",
		"started_at", "finished_at", "pid", "host", "exit_code", "error", "remedy"},
		keys(jobstore.JobStatus{Progress: ptr(0.0), Message: "m", StartedAt: &started, FinishedAt: &started,
			PID: 1, Host: "h", ExitCode: ptr(0), Error: "e", Remedy: "r"}))
}

// TestDecode_IgnoresFieldsItDoesNotKnow: a Python tool may add its own
// fields to a record of the current version; readers take what they know
// and ignore the rest (README: unknown fields are not preserved).
func TestDecode_IgnoresFieldsItDoesNotKnow(t *testing.T) {
	st, _, err := jobstore.DecodeStatus([]byte(`{"schema_version": 1, "job_id": "j", "state": "running", "seq": 3,
		"updated_at": "2026-11-30T09:35:40.123456+00:00", "qgis_layer": {"id": 7}, "eta_s": 12.5}`))
	require.NoError(t, err)
	assert.Equal(t, jobstore.Running, st.State)
	assert.Equal(t, uint64(3), st.Seq)

	spec, _, err := jobstore.DecodeSpec([]byte(`{"schema_version": 1, "job_id": "j", "kind": "k",
		"submitted_at": "2026-11-30T09:35:40+00:00", "priority": "high"}`))
	require.NoError(t, err)
	assert.Equal(t, "k", spec.Kind)
}
