package jobstore

import (
	"encoding/json"
	"fmt"
	"math"
	"time"
)

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

func checkYear(op, path, field string, t time.Time) error {
	if y := t.UTC().Year(); y < 1 || y > 9999 {
		return errInvalid(op, path, invalid{subject: field, found: t, supported: "years 1..9999", msg: fmt.Sprintf("year %d is outside 1..9999", y)})
	}
	return nil
}

// checkProgress refuses a progress outside [0, 1], and NaN.
func checkProgress(op, path string, p float64) error {
	if math.IsNaN(p) || p < 0 || p > 1 {
		return errInvalid(op, path, invalid{subject: "progress", found: p, supported: "a number within [0, 1]", msg: fmt.Sprintf("%v is not within [0, 1]", p)})
	}
	return nil
}
