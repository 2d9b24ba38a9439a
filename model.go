package jobstore

import (
	"encoding/json"
	"fmt"
	"math"
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
// names are the file format, shared with non-Go tools; its JSON Schema is
// docs/schema/status.schema.json in the repository. An optional field is
// left out of the file when nil, zero or empty, and every timestamp is
// written in UTC to the microsecond, its year within 1..9999. RetryAt and
// Attempts are schema version 2.
type JobStatus struct {
	// SchemaVersion (schema_version) is the record's format version.
	// WriteStatus stamps StatusSchemaVersion; a reader migrates an older
	// record in memory and refuses a newer one with ErrNewerSchema.
	SchemaVersion int `json:"schema_version"`
	// JobID (job_id) should be the job directory's name: WriteStatus fills
	// it in when empty and refuses an invalid ID, but does not compare the
	// two (jobstore check does).
	JobID string `json:"job_id"`
	// State (state) is where the job is in its life, one of States().
	// Succeeded, Failed, Cancelled and Lost are final.
	State State `json:"state"`
	// Seq (seq) is the update counter. WriteStatus writes it as given;
	// Submit writes 1, and the Run handle and Reconcile write one more than
	// the record they replace, so a poller can tell a new record from one
	// it has seen.
	Seq uint64 `json:"seq"`
	// Progress (progress, optional) is how far along the job is, within
	// [0, 1]; nil means unknown. WriteStatus refuses a value outside
	// [0, 1], and NaN.
	Progress *float64 `json:"progress,omitempty"`
	// Message (message, optional) is the runner's latest human-readable word.
	Message string `json:"message,omitempty"`
	// UpdatedAt (updated_at) is when this record was written. WriteStatus
	// stamps Now() when it is zero.
	UpdatedAt time.Time `json:"updated_at"`
	// StartedAt (started_at, optional) is when a runner started the job
	// (Start).
	StartedAt *time.Time `json:"started_at,omitempty"`
	// FinishedAt (finished_at, optional) is when the job ended (Finish, or
	// Reconcile marking it lost).
	FinishedAt *time.Time `json:"finished_at,omitempty"`
	// PID (pid, optional) is the runner's process ID on Host, written by
	// Start.
	PID int `json:"pid,omitempty"`
	// Host (host, optional) is the runner's host identity (HostID, or
	// WithHost).
	Host string `json:"host,omitempty"`
	// PIDScope (pid_scope, optional) is where PID names a process: the boot
	// and pid namespace of Host's kernel. With PIDStart, written by a Run,
	// it lets a process on the same host tell at once whether the runner
	// is alive (PID alone may have been reused). Opaque: compare it, never
	// parse it.
	PIDScope string `json:"pid_scope,omitempty"`
	// PIDStart (pid_start, optional) is the start token of the process PID
	// names, written by a Run. Opaque: compare it, never parse it.
	PIDStart string `json:"pid_start,omitempty"`
	// Lease (lease_ms, optional, in milliseconds in the file) is the Run's
	// lease (WithLease), by which a process on another host judges the
	// runner gone. 0 or absent: not written by a Run.
	Lease time.Duration `json:"lease_ms,omitempty"`
	// Attempt (attempt, optional) is which run of the job wrote the record:
	// Start claims attempt N+1 over a record of attempt N (0 or absent:
	// written before a runner claimed one, by Submit, or by a jobstore
	// without attempts). Every write of a Run carries its attempt, and a
	// Reconcile or Start that takes a job over keeps the attempt it fenced.
	// A reader may use it to tell a re-run from a continuation; Seq alone
	// orders records. It is a claim number: a takeover, Retry and a cancel
	// claim one too, so it skips; NumberAttempts numbers attempts for
	// people.
	Attempt uint64 `json:"attempt,omitempty"`
	// ExitCode (exit_code, optional) is the job's exit code, when the
	// runner gave one; 0 is written, nil is left out.
	ExitCode *int `json:"exit_code,omitempty"`
	// Error (error, optional) is what went wrong, for a failed or lost job.
	Error string `json:"error,omitempty"`
	// Remedy (remedy, optional) is what to do about Error.
	Remedy string `json:"remedy,omitempty"`
	// RetryAt (retry_at, schema version 2), in a queued record, says a
	// retry is pending: the job is not started before this time.
	RetryAt *time.Time `json:"retry_at,omitempty"`
	// Attempts (attempts, schema version 2) are the outcomes of the
	// attempts that ended, oldest first, kept for a job with MaxAttempts
	// above 1 or retried by hand.
	Attempts []AttemptEnd `json:"attempts,omitempty"`
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

// Now returns the current time as the package stamps it: UTC, truncated to
// the microsecond (the precision of the file format), without a monotonic
// clock reading.
func Now() time.Time { return normTime(time.Now()) }

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
