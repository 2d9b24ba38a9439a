package jobstore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"time"
)

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
	backoff, err := millis("backoff_ms", j.BackoffMS)
	if err != nil {
		return err
	}
	maxBackoff, err := millis("max_backoff_ms", j.MaxBackoffMS)
	if err != nil {
		return err
	}
	timeout, err := millis("timeout_ms", j.TimeoutMS)
	if err != nil {
		return err
	}
	*s = JobSpec{SchemaVersion: j.SchemaVersion, ID: j.ID, Kind: j.Kind, Params: params,
		SubmittedAt: time.Time(j.SubmittedAt), SubmittedBy: j.SubmittedBy, Labels: j.Labels,
		MaxAttempts: j.MaxAttempts, Backoff: backoff, MaxBackoff: maxBackoff, Priority: j.Priority, Timeout: timeout}
	if j.NotBefore != nil {
		s.NotBefore = time.Time(*j.NotBefore)
	}
	return nil
}

// maxMillis is the largest count of milliseconds a time.Duration holds
// (about 292 years).
const maxMillis = math.MaxInt64 / int64(time.Millisecond)

// millis is field's count of milliseconds ms as a Duration. A count beyond
// what a Duration holds, either way, is ErrInvalid naming the field: read
// as a Duration it would wrap to another value (18446744073710 ms to 448µs).
func millis(field string, ms int64) (time.Duration, error) {
	if ms > maxMillis || ms < -maxMillis {
		return 0, errInvalid("", "", invalid{subject: field, found: ms, supported: fmt.Sprintf("at most %d milliseconds (about 292 years)", maxMillis),
			msg: fmt.Sprintf("%d milliseconds is more than a duration holds", ms)})
	}
	return time.Duration(ms) * time.Millisecond, nil
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
