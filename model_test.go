package jobstore_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
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
	// The least a valid record has (MarshalJSON refuses an invalid one).
	assert.ElementsMatch(t, []string{"schema_version", "job_id", "kind", "submitted_at"}, keys(jobstore.JobSpec{ID: "j", Kind: "k"}))
	assert.ElementsMatch(t, []string{"schema_version", "job_id", "kind", "params", "submitted_at", "submitted_by", "labels"},
		keys(jobstore.JobSpec{ID: "j", Kind: "k", Params: json.RawMessage(`{}`), SubmittedBy: "x", Labels: map[string]string{"a": "b"}}))
	assert.ElementsMatch(t, []string{"schema_version", "job_id", "state", "seq", "updated_at"}, keys(jobstore.JobStatus{State: jobstore.Queued}))
	assert.ElementsMatch(t, []string{"schema_version", "job_id", "state", "seq", "progress", "message", "updated_at",
		"started_at", "finished_at", "pid", "host", "exit_code", "error", "remedy"},
		keys(jobstore.JobStatus{State: jobstore.Running, Progress: ptr(0.0), Message: "m", StartedAt: &started, FinishedAt: &started,
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
		"submitted_at": "2026-11-30T09:35:40+00:00", "urgency": "high"}`))
	require.NoError(t, err)
	assert.Equal(t, "k", spec.Kind)
}

// TestJSON_ValidatesAsTheRecordPathsDo: encoding/json applies the rules of
// DecodeStatus/DecodeSpec on the way in and of WriteStatus/WriteSpec on the
// way out, with the same typed errors; on a refused decode the value is
// left as it was.
func TestJSON_ValidatesAsTheRecordPathsDo(t *testing.T) {
	// subjectOf is what two errors must share: the sentinel and the subject.
	type kindOf struct {
		sentinel error
		subject  string
	}
	subjectOf := func(t *testing.T, err error) kindOf {
		t.Helper()
		var e *jobstore.Error
		require.ErrorAs(t, err, &e, "%v", err)
		return kindOf{e.Sentinel, e.Subject}
	}
	const ts = `"updated_at":"2026-11-30T09:00:00+00:00"`
	badStatuses := []struct{ name, data string }{
		{"unknown state", `{"schema_version":1,"state":"bogus","seq":1,` + ts + `}`},
		{"progress over 1", `{"schema_version":1,"state":"running","seq":1,"progress":2,` + ts + `}`},
		{"negative progress", `{"schema_version":1,"state":"running","seq":1,"progress":-0.5,` + ts + `}`},
		{"bad job_id", `{"schema_version":1,"job_id":"a/b","state":"queued","seq":1,` + ts + `}`},
		{"newer schema", `{"schema_version":3,"state":"queued","seq":1,` + ts + `}`},
		{"no schema_version", `{"state":"queued","seq":1,` + ts + `}`},
	}
	for _, tt := range badStatuses {
		t.Run("status in/"+tt.name, func(t *testing.T) {
			_, _, derr := jobstore.DecodeStatus([]byte(tt.data))
			require.Error(t, derr)
			keep := jobstore.JobStatus{State: jobstore.Queued, Seq: 7}
			got := keep
			uerr := json.Unmarshal([]byte(tt.data), &got)
			require.Error(t, uerr, "json.Unmarshal accepts what DecodeStatus refuses")
			assert.Equal(t, subjectOf(t, derr), subjectOf(t, uerr))
			assert.Equal(t, keep, got, "a refused decode changes nothing")
		})
	}
	specIn := []struct{ name, data string }{
		{"empty kind", `{"schema_version":1,"job_id":"j","kind":"","submitted_at":"2026-11-30T09:00:00+00:00"}`},
		{"reserved job_id", `{"schema_version":1,"job_id":"CON","kind":"k","submitted_at":"2026-11-30T09:00:00+00:00"}`},
		{"newer schema", `{"schema_version":9,"job_id":"j","kind":"k","submitted_at":"2026-11-30T09:00:00+00:00"}`},
	}
	for _, tt := range specIn {
		t.Run("spec in/"+tt.name, func(t *testing.T) {
			_, _, derr := jobstore.DecodeSpec([]byte(tt.data))
			require.Error(t, derr)
			var got jobstore.JobSpec
			uerr := json.Unmarshal([]byte(tt.data), &got)
			require.Error(t, uerr, "json.Unmarshal accepts what DecodeSpec refuses")
			assert.Equal(t, subjectOf(t, derr), subjectOf(t, uerr))
			assert.Zero(t, got)
		})
	}

	statusOut := []struct {
		name string
		st   jobstore.JobStatus
	}{
		{"unknown state", jobstore.JobStatus{State: "bogus"}},
		{"no state", jobstore.JobStatus{}},
		{"progress over 1", jobstore.JobStatus{State: jobstore.Running, Progress: ptr(2.0)}},
		{"bad job_id", jobstore.JobStatus{State: jobstore.Running, JobID: "../x"}},
		{"year 10000", jobstore.JobStatus{State: jobstore.Running, UpdatedAt: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}},
		{"other schema_version", jobstore.JobStatus{State: jobstore.Running, SchemaVersion: 3}},
	}
	for _, tt := range statusOut {
		t.Run("status out/"+tt.name, func(t *testing.T) {
			_, merr := json.Marshal(tt.st)
			require.Error(t, merr, "json.Marshal writes what WriteStatus refuses")
			require.ErrorIs(t, merr, jobstore.ErrInvalid)
			msub := subjectOf(t, merr).subject
			if tt.st.SchemaVersion != 0 {
				assert.Equal(t, "schema_version", msub) // WriteStatus stamps the version instead
				return
			}
			dir := writeJob(t, tempDir(t), specAt("j1", 0), nil)
			werr := jobstore.WriteStatus(dir, tt.st)
			require.ErrorIs(t, werr, jobstore.ErrInvalid)
			wsub := subjectOf(t, werr).subject
			assert.Equal(t, wsub, msub)
		})
	}
	specOut := []struct {
		name string
		spec jobstore.JobSpec
	}{
		{"no ID", jobstore.JobSpec{Kind: "k"}},
		{"no kind", jobstore.JobSpec{ID: "j"}},
		{"params not JSON", jobstore.JobSpec{ID: "j", Kind: "k", Params: json.RawMessage(`{oops`)}},
		{"device ID", jobstore.JobSpec{ID: "aux.txt", Kind: "k"}},
	}
	for _, tt := range specOut {
		t.Run("spec out/"+tt.name, func(t *testing.T) {
			_, merr := json.Marshal(tt.spec)
			require.ErrorIs(t, merr, jobstore.ErrInvalid, "json.Marshal writes what WriteSpec refuses")
			msub := subjectOf(t, merr).subject
			id := tt.spec.ID
			if id == "" {
				id = "j"
			}
			werr := jobstore.WriteSpec(jobstore.JobDir(filepath.Join(tempDir(t), id)), tt.spec)
			require.ErrorIs(t, werr, jobstore.ErrInvalid)
			wsub := subjectOf(t, werr).subject
			assert.Equal(t, wsub, msub)
		})
	}
}

// TestJSON_RoundTripsAValidRecord: what json.Marshal writes, json.Unmarshal
// reads back to the same value, with schema_version stamped as WriteStatus
// and WriteSpec stamp it.
func TestJSON_RoundTripsAValidRecord(t *testing.T) {
	st := jobstore.JobStatus{JobID: "j", State: jobstore.Running, Seq: 3, Progress: ptr(0.25),
		UpdatedAt: time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)}
	b, err := json.Marshal(st)
	require.NoError(t, err)
	var back jobstore.JobStatus
	require.NoError(t, json.Unmarshal(b, &back))
	st.SchemaVersion = jobstore.StatusSchemaVersion
	assert.Equal(t, st, back)

	spec := jobstore.JobSpec{ID: "j", Kind: "k", Params: json.RawMessage(`{"a":1}`), SubmittedAt: submitted}
	b, err = json.Marshal(spec)
	require.NoError(t, err)
	var sback jobstore.JobSpec
	require.NoError(t, json.Unmarshal(b, &sback))
	spec.SchemaVersion = jobstore.JobSchemaVersion
	assert.Equal(t, spec, sback)
}
