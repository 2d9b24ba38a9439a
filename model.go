package jobstore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"time"
)

// Schema versions this package understands. A record with a smaller
// schema_version is migrated in memory on read; a larger one is refused with
// ErrNewerSchema. Version 2 adds the fields of retries and scheduling
// (JobSpec's MaxAttempts to Timeout, JobStatus's RetryAt and Attempts); a
// record that uses none of them is written as version 1, so that a reader
// of version 1 reads it, and one that uses any is written as version 2, so
// that such a reader refuses it rather than misread it.
const (
	JobSchemaVersion    = 2
	StatusSchemaVersion = 2
)

// baseSchemaVersion is the version a record is written with when it uses
// no field of a later one.
const baseSchemaVersion = 1

// JobSpec is job.json: what was asked for. It is written once by WriteSpec
// and then read-only. The JSON names are the file format, shared with
// non-Go tools: docs/format.md in the repository describes it, and
// docs/schema/job.schema.json is its JSON Schema. The fields, with their
// JSON names:
//
//   - SchemaVersion (schema_version): the record's format version.
//     WriteSpec stamps JobSchemaVersion; a reader migrates an older record
//     in memory and refuses a newer one with ErrNewerSchema.
//   - ID (job_id): the job ID, equal to the job directory's name (see
//     ValidateJobID). Submit generates one with NewJobID when it is empty.
//   - Kind (kind): what kind of job this is; must not be empty. jobstore
//     gives it no meaning; runners do.
//   - Params (params): the job's parameters, any JSON value, or nil for
//     none. jobstore checks only that they are valid JSON. A read returns
//     them compacted, and a JSON null as nil.
//   - SubmittedAt (submitted_at): when the job was submitted. WriteSpec
//     stamps Now() when it is zero. Written in UTC to the microsecond (see
//     Now); its year must be within 1..9999.
//   - SubmittedBy (submitted_by): who submitted the job, free-form; empty
//     is left out of the file.
//   - Labels (labels): free-form string labels; empty is left out of the
//     file and read back as nil.
//
// Retries and scheduling (schema version 2; zero values are left out):
//
//   - MaxAttempts (max_attempts): how many attempts may fail or be lost
//     before the job ends failed or lost; 0 or 1: one attempt.
//   - Backoff (backoff_ms, in milliseconds in the file): the delay before
//     the first retry, doubled for each later one, with jitter; 0:
//     DefaultBackoff.
//   - MaxBackoff (max_backoff_ms): the cap of that delay; 0:
//     DefaultMaxBackoff.
//   - NotBefore (not_before): the job starts no earlier; zero: at once.
//   - Priority (priority): among the jobs a worker may start, a higher
//     priority starts first, then the oldest.
//   - Timeout (timeout_ms): how long an attempt may run; its Run's Context
//     ends then, and the attempt fails "timed out". 0: no limit.
type JobSpec struct {
	SchemaVersion int               `json:"schema_version"`
	ID            string            `json:"job_id"`
	Kind          string            `json:"kind"`
	Params        json.RawMessage   `json:"params,omitempty"`
	SubmittedAt   time.Time         `json:"submitted_at"`
	SubmittedBy   string            `json:"submitted_by,omitempty"`
	Labels        map[string]string `json:"labels,omitempty"`
	MaxAttempts   int               `json:"max_attempts,omitempty"`
	Backoff       time.Duration     `json:"backoff_ms,omitempty"`     // written in milliseconds
	MaxBackoff    time.Duration     `json:"max_backoff_ms,omitempty"` // written in milliseconds
	NotBefore     time.Time         `json:"not_before,omitzero"`
	Priority      int               `json:"priority,omitempty"`
	Timeout       time.Duration     `json:"timeout_ms,omitempty"` // written in milliseconds
}

// schedules reports whether s uses a field of schema version 2.
func (s *JobSpec) schedules() bool {
	return s.MaxAttempts != 0 || s.Backoff != 0 || s.MaxBackoff != 0 || !s.NotBefore.IsZero() || s.Priority != 0 || s.Timeout != 0
}

// State is a job's lifecycle state as written in status.json.
type State string

// The states. Succeeded, Failed, Cancelled and Lost are terminal.
const (
	Queued    State = "queued"
	Running   State = "running"
	Succeeded State = "succeeded"
	Failed    State = "failed"
	Cancelled State = "cancelled"
	// Lost: the runner went away without writing a final state.
	Lost State = "lost"
)

// States lists every known state, in lifecycle order.
func States() []State { return []State{Queued, Running, Succeeded, Failed, Cancelled, Lost} }

// Known reports whether s is one of the states above.
func (s State) Known() bool {
	switch s {
	case Queued, Running, Succeeded, Failed, Cancelled, Lost:
		return true
	}
	return false
}

// Terminal reports whether s is a final state: succeeded, failed, cancelled
// or lost.
func (s State) Terminal() bool {
	switch s {
	case Succeeded, Failed, Cancelled, Lost:
		return true
	}
	return false
}

// JobStatus is status.json: the runner's latest word on a job, rewritten
// whole on every update by the one process that holds job.lock. Its JSON
// Schema is docs/schema/status.schema.json in the repository. The fields,
// with their JSON names (optional ones are left out of the file when nil,
// zero or empty):
//
//   - SchemaVersion (schema_version): the record's format version.
//     WriteStatus stamps StatusSchemaVersion; a reader migrates an older
//     record in memory and refuses a newer one with ErrNewerSchema.
//   - JobID (job_id): the job ID, which should be the job directory's
//     name: WriteStatus fills that in when it is empty and refuses an
//     invalid ID, but does not compare the two (jobstore check does).
//   - State (state): where the job is in its life, one of States().
//     Succeeded, Failed, Cancelled and Lost are final.
//   - Seq (seq): the update counter. WriteStatus writes it as given;
//     Submit writes 1, and the Run handle and Reconcile write one more than
//     the record they replace, so a poller can tell a new record from one
//     it has seen.
//   - Progress (progress, optional): how far along the job is, within
//     [0, 1]; nil means unknown. WriteStatus refuses a value outside
//     [0, 1], and NaN.
//   - Message (message, optional): the runner's latest human-readable word.
//   - UpdatedAt (updated_at): when this record was written. WriteStatus
//     stamps Now() when it is zero. Written in UTC to the microsecond; its
//     year must be within 1..9999, as for every timestamp here.
//   - StartedAt (started_at, optional): when a runner started the job
//     (Start).
//   - FinishedAt (finished_at, optional): when the job ended (Finish, or
//     Reconcile marking it lost).
//   - PID (pid, optional): the runner's process ID on Host, written by
//     Start.
//   - Host (host, optional): the runner's host identity (HostID, or
//     WithHost).
//   - PIDScope (pid_scope, optional) and PIDStart (pid_start, optional):
//     where PID names a process (the boot and pid namespace of Host's
//     kernel) and that process's start token, written by a Run so that a
//     process on the same host can tell at once whether the runner is
//     alive (PID alone may have been reused). Opaque strings: compare them,
//     never parse them.
//   - Lease (lease_ms, optional, in milliseconds in the file): the Run's
//     lease (WithLease), by which a process on another host judges the
//     runner gone. 0 or absent: not written by a Run.
//   - Attempt (attempt, optional): which run of the job wrote the record:
//     Start claims attempt N+1 over a record of attempt N (0 or absent:
//     written before a runner claimed one, by Submit, or by a jobstore
//     without attempts). Every write of a Run carries its attempt, and a
//     Reconcile or Start that takes a job over keeps the attempt it
//     fenced, so the record says which attempt's runner it is about. A
//     reader may use it to tell a re-run from a continuation; seq alone
//     orders records.
//   - ExitCode (exit_code, optional): the job's exit code, when the runner
//     gave one; 0 is written, nil is left out.
//   - Error (error, optional): what went wrong, for a failed or lost job.
//   - Remedy (remedy, optional): what to do about it.
//
// Retries (schema version 2; left out when empty):
//
//   - RetryAt (retry_at): in a queued record, a retry is pending and the
//     job is not started before this time.
//   - Attempts (attempts): the outcome of each attempt that ended, oldest
//     first, kept for a job with MaxAttempts above 1 or retried by hand.
type JobStatus struct {
	SchemaVersion int           `json:"schema_version"`
	JobID         string        `json:"job_id"`
	State         State         `json:"state"`
	Seq           uint64        `json:"seq"`
	Progress      *float64      `json:"progress,omitempty"` // nil: unknown; else within [0, 1]
	Message       string        `json:"message,omitempty"`
	UpdatedAt     time.Time     `json:"updated_at"`
	StartedAt     *time.Time    `json:"started_at,omitempty"`
	FinishedAt    *time.Time    `json:"finished_at,omitempty"`
	PID           int           `json:"pid,omitempty"`
	Host          string        `json:"host,omitempty"`
	PIDScope      string        `json:"pid_scope,omitempty"`
	PIDStart      string        `json:"pid_start,omitempty"`
	Lease         time.Duration `json:"lease_ms,omitempty"` // written in milliseconds
	Attempt       uint64        `json:"attempt,omitempty"`
	ExitCode      *int          `json:"exit_code,omitempty"`
	Error         string        `json:"error,omitempty"`
	Remedy        string        `json:"remedy,omitempty"`
	RetryAt       *time.Time    `json:"retry_at,omitempty"`
	Attempts      []AttemptEnd  `json:"attempts,omitempty"`
}

// retries reports whether s uses a field of schema version 2.
func (s *JobStatus) retries() bool { return s.RetryAt != nil || len(s.Attempts) > 0 }

// AttemptEnd is how one attempt of a job ended, as status.json's attempts
// keep it. State is Succeeded, Failed, Cancelled or Lost. Interrupted marks
// an attempt its worker stopped (a Worker's Run returning with the job
// still running): it was put back at once and counts against no
// MaxAttempts.
type AttemptEnd struct {
	Attempt     uint64     `json:"attempt"`
	State       State      `json:"state"`
	Interrupted bool       `json:"interrupted,omitempty"`
	StartedAt   *time.Time `json:"started_at,omitempty"`
	EndedAt     time.Time  `json:"ended_at"`
	Host        string     `json:"host,omitempty"`
	ExitCode    *int       `json:"exit_code,omitempty"`
	Error       string     `json:"error,omitempty"`
}

type attemptEndJSON struct {
	Attempt     uint64   `json:"attempt"`
	State       State    `json:"state"`
	Interrupted bool     `json:"interrupted,omitempty"`
	StartedAt   *isoTime `json:"started_at,omitempty"`
	EndedAt     isoTime  `json:"ended_at"`
	Host        string   `json:"host,omitempty"`
	ExitCode    *int     `json:"exit_code,omitempty"`
	Error       string   `json:"error,omitempty"`
}

// MarshalJSON writes the file format (timestamps as for the records).
func (a AttemptEnd) MarshalJSON() ([]byte, error) {
	return encodeJSON(attemptEndJSON{Attempt: a.Attempt, State: a.State, Interrupted: a.Interrupted, StartedAt: timePtr(a.StartedAt),
		EndedAt: isoTime(a.EndedAt), Host: a.Host, ExitCode: a.ExitCode, Error: a.Error}, "")
}

// UnmarshalJSON reads the file format.
func (a *AttemptEnd) UnmarshalJSON(b []byte) error {
	var j attemptEndJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*a = AttemptEnd{Attempt: j.Attempt, State: j.State, Interrupted: j.Interrupted, StartedAt: (*time.Time)(j.StartedAt),
		EndedAt: time.Time(j.EndedAt), Host: j.Host, ExitCode: j.ExitCode, Error: j.Error}
	return nil
}

// isoLayout is how timestamps are written.
//
// Written: UTC, microseconds, "+00:00", the way Python's datetime.isoformat()
// writes an aware UTC datetime: 2026-11-30T09:35:40.123456+00:00. Python's
// datetime.fromisoformat parses that on every version from 3.7 (3.9, still
// shipped by GUI hosts, rejects "Z").
//
// Read: any RFC 3339 form, and isoformat forms, including a space for the
// "T" and no offset at all (taken as UTC). What is read is normalised to UTC
// and truncated to the microsecond, so a record re-reads to the value it
// was written with. Years outside 1..9999 (Python's range) are refused.
const isoLayout = "2006-01-02T15:04:05.000000"

// Now returns the current time as the package stamps it: UTC, truncated to
// the microsecond (the precision of the file format), without a monotonic
// clock reading.
func Now() time.Time { return normTime(time.Now()) }

// isoTime is time.Time with the file format's encoding.
type isoTime time.Time

func (t isoTime) MarshalJSON() ([]byte, error) {
	u := time.Time(t).UTC()
	if y := u.Year(); y < 1 || y > 9999 {
		return nil, fmt.Errorf("year %d is outside 1..9999", y)
	}
	b := make([]byte, 0, 34)
	b = append(b, '"')
	b = u.AppendFormat(b, isoLayout)
	b = append(b, "+00:00\""...)
	return b, nil
}

func (t *isoTime) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*t = isoTime{}
		return nil
	}
	// Errors are *json.UnmarshalTypeError so that encoding/json names the field.
	var s string
	if n := len(b); n >= 2 && b[0] == '"' && b[n-1] == '"' && bytes.IndexByte(b, '\\') < 0 {
		s = string(b[1 : n-1]) // the usual case: no escapes to undo
	} else if err := json.Unmarshal(b, &s); err != nil {
		return &json.UnmarshalTypeError{Value: "not a string (" + string(b) + ")", Type: timeType}
	}
	v, err := parseTime(s)
	if err != nil {
		return &json.UnmarshalTypeError{Value: err.Error(), Type: timeType}
	}
	*t = isoTime(v)
	return nil
}

var timeType = reflect.TypeFor[time.Time]()

// parseTime accepts RFC 3339 and Python isoformat timestamps.
func parseTime(s string) (time.Time, error) {
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		// isoformat: "T" or " " between date and time, offset optional.
		n := []byte(s)
		if len(n) > 10 && n[10] == ' ' {
			n[10] = 'T'
		}
		ns := string(n)
		if v, err = time.Parse(time.RFC3339Nano, ns); err != nil {
			if v, err = time.ParseInLocation("2006-01-02T15:04:05.999999999", ns, time.UTC); err != nil {
				return time.Time{}, fmt.Errorf("%q", s)
			}
		}
	}
	v = normTime(v)
	if y := v.Year(); y < 1 || y > 9999 {
		return time.Time{}, fmt.Errorf("%q (year %d, outside 1..9999)", s, y)
	}
	return v, nil
}

func timePtr(t *time.Time) *isoTime { return (*isoTime)(t) }

// encodeJSON is the package's one JSON encoder. It never escapes HTML, so
// '<', '>' and '&' stay as written (Python's json.dump does not escape them
// either). With an indent, each level is indented by it and the value ends
// with a newline (a record file's layout); without, the value is compact
// and ends without one (MarshalJSON).
func encodeJSON(v any, indent string) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", indent)
	if err := enc.Encode(v); err != nil { // Encode ends the value with '\n'
		return nil, err
	}
	if indent == "" {
		return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
	}
	return buf.Bytes(), nil
}

// checkProgress refuses a progress outside [0, 1], and NaN.
func checkProgress(op, path string, p float64) error {
	if math.IsNaN(p) || p < 0 || p > 1 {
		return errInvalid(op, path, invalid{subject: "progress", found: p, supported: "a number within [0, 1]", msg: fmt.Sprintf("%v is not within [0, 1]", p)})
	}
	return nil
}

type jobSpecJSON struct {
	SchemaVersion int               `json:"schema_version"`
	ID            string            `json:"job_id"`
	Kind          string            `json:"kind"`
	Params        json.RawMessage   `json:"params,omitempty"`
	SubmittedAt   isoTime           `json:"submitted_at"`
	SubmittedBy   string            `json:"submitted_by,omitempty"`
	Labels        map[string]string `json:"labels,omitempty"`
	MaxAttempts   int               `json:"max_attempts,omitempty"`
	BackoffMS     int64             `json:"backoff_ms,omitempty"`
	MaxBackoffMS  int64             `json:"max_backoff_ms,omitempty"`
	NotBefore     *isoTime          `json:"not_before,omitempty"`
	Priority      int               `json:"priority,omitempty"`
	TimeoutMS     int64             `json:"timeout_ms,omitempty"`
}

// MarshalJSON writes the file format (timestamps as described above). It
// applies WriteSpec's rules, so that encoding/json never writes what
// DecodeSpec would refuse: a schema_version of 0 is written as
// JobSchemaVersion, and a spec that is invalid (ErrInvalid, Subject naming
// the field; schema_version other than 0 or JobSchemaVersion included) is
// not encoded. json.Marshal wraps that *Error in a *json.MarshalerError;
// errors.Is and errors.As see through it. Unlike WriteSpec it does not stamp
// SubmittedAt, and it does not check the ID against a directory.
func (s JobSpec) MarshalJSON() ([]byte, error) {
	if err := readyToEncode(&s.SchemaVersion, JobSchemaVersion, s.schedules(), s.validate); err != nil {
		return nil, err
	}
	j := jobSpecJSON{SchemaVersion: s.SchemaVersion, ID: s.ID, Kind: s.Kind, Params: s.Params,
		SubmittedAt: isoTime(s.SubmittedAt), SubmittedBy: s.SubmittedBy, Labels: s.Labels,
		MaxAttempts: s.MaxAttempts, BackoffMS: s.Backoff.Milliseconds(), MaxBackoffMS: s.MaxBackoff.Milliseconds(),
		Priority: s.Priority, TimeoutMS: s.Timeout.Milliseconds()}
	if !s.NotBefore.IsZero() {
		j.NotBefore = timePtr(&s.NotBefore)
	}
	return encodeJSON(j, "")
}

// decode is UnmarshalJSON without the outer pass that encoding/json makes
// before calling it: the record readers call it directly, so a current
// record costs one parse.
func (s *JobSpec) decode(b []byte) error {
	var j jobSpecJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	params := j.Params
	if len(params) > 0 {
		var c bytes.Buffer
		if err := json.Compact(&c, params); err != nil {
			return err
		}
		params = c.Bytes()
		if string(params) == "null" {
			params = nil
		}
	}
	if len(j.Labels) == 0 {
		j.Labels = nil
	}
	*s = JobSpec{SchemaVersion: j.SchemaVersion, ID: j.ID, Kind: j.Kind, Params: params,
		SubmittedAt: time.Time(j.SubmittedAt), SubmittedBy: j.SubmittedBy, Labels: j.Labels,
		MaxAttempts: j.MaxAttempts, Backoff: time.Duration(j.BackoffMS) * time.Millisecond,
		MaxBackoff: time.Duration(j.MaxBackoffMS) * time.Millisecond, Priority: j.Priority,
		Timeout: time.Duration(j.TimeoutMS) * time.Millisecond}
	if j.NotBefore != nil {
		s.NotBefore = time.Time(*j.NotBefore)
	}
	return nil
}

type jobStatusJSON struct {
	SchemaVersion int          `json:"schema_version"`
	JobID         string       `json:"job_id"`
	State         State        `json:"state"`
	Seq           uint64       `json:"seq"`
	Progress      *float64     `json:"progress,omitempty"`
	Message       string       `json:"message,omitempty"`
	UpdatedAt     isoTime      `json:"updated_at"`
	StartedAt     *isoTime     `json:"started_at,omitempty"`
	FinishedAt    *isoTime     `json:"finished_at,omitempty"`
	PID           int          `json:"pid,omitempty"`
	Host          string       `json:"host,omitempty"`
	PIDScope      string       `json:"pid_scope,omitempty"`
	PIDStart      string       `json:"pid_start,omitempty"`
	LeaseMS       int64        `json:"lease_ms,omitempty"`
	Attempt       uint64       `json:"attempt,omitempty"`
	ExitCode      *int         `json:"exit_code,omitempty"`
	Error         string       `json:"error,omitempty"`
	Remedy        string       `json:"remedy,omitempty"`
	RetryAt       *isoTime     `json:"retry_at,omitempty"`
	Attempts      []AttemptEnd `json:"attempts,omitempty"`
}

// MarshalJSON writes the file format (timestamps as described above). It
// applies WriteStatus's rules, so that encoding/json never writes what
// DecodeStatus would refuse: a schema_version of 0 is written as
// StatusSchemaVersion, and a status that is invalid (ErrInvalid, Subject
// naming the field; schema_version other than 0 or StatusSchemaVersion
// included) is not encoded. json.Marshal wraps that *Error in a
// *json.MarshalerError; errors.Is and errors.As see through it. Unlike
// WriteStatus it stamps neither UpdatedAt nor JobID.
func (s JobStatus) MarshalJSON() ([]byte, error) {
	if err := readyToEncode(&s.SchemaVersion, StatusSchemaVersion, s.retries(), s.validate); err != nil {
		return nil, err
	}
	return encodeJSON(jobStatusJSON{
		SchemaVersion: s.SchemaVersion, JobID: s.JobID, State: s.State, Seq: s.Seq, Progress: s.Progress, Message: s.Message,
		UpdatedAt: isoTime(s.UpdatedAt), StartedAt: timePtr(s.StartedAt), FinishedAt: timePtr(s.FinishedAt),
		PID: s.PID, Host: s.Host, PIDScope: s.PIDScope, PIDStart: s.PIDStart, LeaseMS: s.Lease.Milliseconds(),
		Attempt: s.Attempt, ExitCode: s.ExitCode, Error: s.Error, Remedy: s.Remedy,
		RetryAt: timePtr(s.RetryAt), Attempts: s.Attempts,
	}, "")
}

// decode: see JobSpec.decode. A record as jobstore writes it is decoded
// without reflection (decodeWritten); anything else by encoding/json.
func (s *JobStatus) decode(b []byte) error {
	var j jobStatusJSON
	if !j.decodeWritten(b) {
		j = jobStatusJSON{}
		if err := json.Unmarshal(b, &j); err != nil {
			return err
		}
	}
	*s = JobStatus{
		SchemaVersion: j.SchemaVersion, JobID: j.JobID, State: j.State, Seq: j.Seq, Progress: j.Progress, Message: j.Message,
		UpdatedAt: time.Time(j.UpdatedAt), StartedAt: (*time.Time)(j.StartedAt), FinishedAt: (*time.Time)(j.FinishedAt),
		PID: j.PID, Host: j.Host, PIDScope: j.PIDScope, PIDStart: j.PIDStart, Lease: time.Duration(j.LeaseMS) * time.Millisecond,
		Attempt: j.Attempt, ExitCode: j.ExitCode, Error: j.Error, Remedy: j.Remedy,
		RetryAt: (*time.Time)(j.RetryAt), Attempts: j.Attempts,
	}
	return nil
}

// readyToEncode is what every record's MarshalJSON checks before it
// encodes: a schema_version of 0 (not set) or one this package writes is
// stamped with the version the record needs (writeVersion), another one is
// refused, and then the record's own validation (which sees the stamp)
// must pass.
func readyToEncode(version *int, current int, later bool, validate func(op, path string) error) error {
	if err := checkWriteVersion(*version, current); err != nil {
		return err
	}
	*version = writeVersion(current, later)
	return validate("", "")
}

// writeVersion is the schema version a record is written with: current if
// it uses a field added after baseSchemaVersion (later), else the base
// version, which every reader since reads.
func writeVersion(current int, later bool) int {
	if later || current < baseSchemaVersion {
		return current
	}
	return baseSchemaVersion
}

// checkWriteVersion refuses to encode a record of a schema version this
// package does not write; 0 (not set) is written as the record needs.
func checkWriteVersion(v, current int) error {
	if v == 0 || (v >= baseSchemaVersion && v <= current) {
		return nil
	}
	return errInvalid("", "", invalid{subject: "schema_version", found: v, supported: fmt.Sprintf("%d to %d", baseSchemaVersion, current), msg: fmt.Sprintf("%d is not a version this jobstore writes", v)})
}

func checkYear(op, path, field string, t time.Time) error {
	if y := t.UTC().Year(); y < 1 || y > 9999 {
		return errInvalid(op, path, invalid{subject: field, found: t, supported: "years 1..9999", msg: fmt.Sprintf("year %d is outside 1..9999", y)})
	}
	return nil
}

// validate checks a spec's fields; op and path go into the error.
func (s *JobSpec) validate(op, path string) error {
	if err := validateJobID(op, path, s.ID); err != nil {
		return err
	}
	if s.Kind == "" {
		return errInvalid(op, path, invalid{subject: "kind", found: s.Kind, supported: "a non-empty string", msg: "is empty"})
	}
	if len(s.Params) > 0 && !json.Valid(s.Params) {
		return errInvalid(op, path, invalid{subject: "params", found: string(s.Params), supported: "a JSON value", msg: "is not valid JSON"})
	}
	if s.MaxAttempts < 0 {
		return errInvalid(op, path, invalid{subject: "max_attempts", found: s.MaxAttempts, supported: "0 (one attempt) or more", msg: fmt.Sprintf("%d is negative", s.MaxAttempts)})
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"backoff_ms", s.Backoff}, {"max_backoff_ms", s.MaxBackoff}, {"timeout_ms", s.Timeout}} {
		if d.v < 0 {
			return errInvalid(op, path, invalid{subject: d.name, found: d.v.Milliseconds(), supported: "0 (the default) or more", msg: fmt.Sprintf("%v is negative", d.v)})
		}
	}
	if s.MaxBackoff != 0 && s.MaxBackoff < s.Backoff {
		return errInvalid(op, path, invalid{subject: "max_backoff_ms", found: s.MaxBackoff.Milliseconds(), supported: fmt.Sprintf("0 or at least backoff_ms (%d)", s.Backoff.Milliseconds()), msg: fmt.Sprintf("the cap %v is below the first delay %v", s.MaxBackoff, s.Backoff)})
	}
	if !s.NotBefore.IsZero() {
		if err := checkYear(op, path, "not_before", s.NotBefore); err != nil {
			return err
		}
	}
	return checkYear(op, path, "submitted_at", s.SubmittedAt)
}

// validate checks a status's fields; op and path go into the error.
func (s *JobStatus) validate(op, path string) error {
	if !s.State.Known() {
		return errInvalid(op, path, invalid{subject: "state", found: string(s.State), supported: States(), msg: fmt.Sprintf("%q is not a known state", s.State)})
	}
	if s.Progress != nil {
		if err := checkProgress(op, path, *s.Progress); err != nil {
			return err
		}
	}
	if s.JobID != "" {
		if err := validateJobID(op, path, s.JobID); err != nil {
			return err
		}
	}
	if s.Lease < 0 {
		return errInvalid(op, path, invalid{subject: "lease_ms", found: s.Lease.Milliseconds(), supported: "0 (none) or more", msg: fmt.Sprintf("%v is negative", s.Lease)})
	}
	for _, f := range []struct {
		name string
		t    *time.Time
	}{{"updated_at", &s.UpdatedAt}, {"started_at", s.StartedAt}, {"finished_at", s.FinishedAt}, {"retry_at", s.RetryAt}} {
		if f.t != nil {
			if err := checkYear(op, path, f.name, *f.t); err != nil {
				return err
			}
		}
	}
	if s.RetryAt != nil && s.State != Queued {
		return errInvalid(op, path, invalid{subject: "retry_at", found: string(s.State), supported: "a queued record", msg: fmt.Sprintf("a pending retry in a %s record", s.State)})
	}
	for i, a := range s.Attempts {
		if !a.State.Terminal() {
			return errInvalid(op, path, invalid{subject: fmt.Sprintf("attempts[%d].state", i), found: string(a.State), supported: []State{Succeeded, Failed, Cancelled, Lost}, msg: fmt.Sprintf("%q is not how an attempt ends", a.State)})
		}
		if a.EndedAt.IsZero() {
			return errInvalid(op, path, invalid{subject: fmt.Sprintf("attempts[%d].ended_at", i), supported: "a timestamp", msg: "is missing"})
		}
		if err := checkYear(op, path, fmt.Sprintf("attempts[%d].ended_at", i), a.EndedAt); err != nil {
			return err
		}
		if a.StartedAt != nil {
			if err := checkYear(op, path, fmt.Sprintf("attempts[%d].started_at", i), *a.StartedAt); err != nil {
				return err
			}
		}
	}
	return nil
}

// CancelSchemaVersion is the schema version of cancel.json this package
// writes and understands (see JobSchemaVersion for the rule).
const CancelSchemaVersion = 1

// CancelRequest is cancel.json: someone asks the job to stop. It is written
// once by RequestCancel (or by any tool that publishes the file the same
// way: see the format documentation) and then read-only.
//
// The request is the file's existence: once cancel.json is in the job
// directory the job is asked to stop, whoever wrote it. Its fields say who
// asked, when and why; a cancel.json that cannot be read still counts as a
// request whose requester and reason are unknown.
type CancelRequest struct {
	SchemaVersion int       `json:"schema_version"`
	JobID         string    `json:"job_id"`
	RequestedAt   time.Time `json:"requested_at"`
	RequestedBy   string    `json:"requested_by,omitempty"` // who asked: a user, a tool; optional
	Reason        string    `json:"reason,omitempty"`       // why, in words; optional
}

type cancelRequestJSON struct {
	SchemaVersion int     `json:"schema_version"`
	JobID         string  `json:"job_id"`
	RequestedAt   isoTime `json:"requested_at"`
	RequestedBy   string  `json:"requested_by,omitempty"`
	Reason        string  `json:"reason,omitempty"`
}

// MarshalJSON writes the file format (timestamps as for the other records)
// after the checks RequestCancel makes: schema_version 0 (written as
// CancelSchemaVersion) or CancelSchemaVersion, job_id a valid ID,
// requested_at set. So encoding/json never writes a request that
// ReadCancel would refuse.
func (c CancelRequest) MarshalJSON() ([]byte, error) {
	if err := readyToEncode(&c.SchemaVersion, CancelSchemaVersion, false, c.validate); err != nil {
		return nil, err
	}
	return encodeJSON(cancelRequestJSON{SchemaVersion: c.SchemaVersion, JobID: c.JobID, RequestedAt: isoTime(c.RequestedAt),
		RequestedBy: c.RequestedBy, Reason: c.Reason}, "")
}

// decode: see JobSpec.decode.
func (c *CancelRequest) decode(b []byte) error {
	var j cancelRequestJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*c = CancelRequest{SchemaVersion: j.SchemaVersion, JobID: j.JobID, RequestedAt: time.Time(j.RequestedAt),
		RequestedBy: j.RequestedBy, Reason: j.Reason}
	return nil
}

// validate checks a request's fields; op and path go into the error.
func (c *CancelRequest) validate(op, path string) error {
	if err := validateJobID(op, path, c.JobID); err != nil {
		return err
	}
	if c.RequestedAt.IsZero() {
		return errInvalid(op, path, invalid{subject: "requested_at", supported: "a timestamp", msg: "is missing"})
	}
	return checkYear(op, path, "requested_at", c.RequestedAt)
}

// nextSeq returns the seq that follows seq. seq never wraps: at the largest
// value (2^64-1) the next update is refused with an *Error of kind
// ErrInvalid, Subject "seq", since a poller takes a smaller seq for an older
// record and would never show the update.
func nextSeq(op, path string, seq uint64) (uint64, error) {
	if seq == math.MaxUint64 {
		return 0, errInvalid(op, path, invalid{subject: "seq", found: seq, supported: fmt.Sprintf("a seq below %d to update from", uint64(math.MaxUint64)), msg: fmt.Sprintf("is %d, the largest there is: the next update would wrap it to 0, and seq never goes back", seq), remedy: "this job's status cannot change any more; submit a new job"})
	}
	return seq + 1, nil
}

// copyStatus copies st deeply, so that no pointer field is shared.
func copyStatus(st JobStatus) JobStatus {
	st.Progress = clonePtr(st.Progress)
	st.StartedAt = clonePtr(st.StartedAt)
	st.FinishedAt = clonePtr(st.FinishedAt)
	st.ExitCode = clonePtr(st.ExitCode)
	st.RetryAt = clonePtr(st.RetryAt)
	if st.Attempts != nil {
		as := make([]AttemptEnd, len(st.Attempts))
		for i, a := range st.Attempts {
			a.StartedAt, a.ExitCode = clonePtr(a.StartedAt), clonePtr(a.ExitCode)
			as[i] = a
		}
		st.Attempts = as
	}
	return st
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
