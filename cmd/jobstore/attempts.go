package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/axqua/jobstore"
)

// How list and show tell a job's attempts: which attempt of how many it
// is at, when a pending retry is due, and each ended attempt.

// countedAttempts is how many of st's ended attempts count against the
// job's max_attempts: those that failed or were lost, unless their worker
// stopped them (interrupted), as the library's retry policy counts them.
func countedAttempts(st *jobstore.JobStatus) int {
	n := 0
	for _, a := range st.Attempts {
		if (a.State == jobstore.Failed || a.State == jobstore.Lost) && !a.Interrupted {
			n++
		}
	}
	return n
}

// attemptNote is list's note on a job's attempts: "attempt 2/3" (the one
// running, queued next, or the last that ended; when a pending retry is
// due, scheduleNote says); "" for a job of one attempt that has kept none.
func attemptNote(spec *jobstore.JobSpec, st *jobstore.JobStatus) string {
	if spec == nil || st == nil || (spec.MaxAttempts <= 1 && len(st.Attempts) == 0) {
		return ""
	}
	n := countedAttempts(st)
	switch st.State {
	case jobstore.Failed, jobstore.Lost:
		n = max(n, 1)
	default:
		n++ // the attempt running, due next, or the one that succeeded or was cancelled
	}
	return fmt.Sprintf("attempt %d/%d", n, max(spec.MaxAttempts, 1))
}

// scheduleText is show's line on how a job is to run: its retry policy,
// not_before, priority and timeout, those set; "" when none is.
func scheduleText(s *jobstore.JobSpec) string {
	var parts []string
	if s.MaxAttempts > 1 {
		backoff, limit := s.Backoff, s.MaxBackoff
		if backoff <= 0 {
			backoff = jobstore.DefaultBackoff
		}
		if limit <= 0 {
			limit = max(jobstore.DefaultMaxBackoff, backoff)
		}
		parts = append(parts, fmt.Sprintf("max %d attempts, backoff %v doubling up to %v", s.MaxAttempts, backoff, limit))
	} else if s.MaxAttempts == 1 {
		parts = append(parts, "max 1 attempt")
	}
	if !s.NotBefore.IsZero() {
		parts = append(parts, "not before "+fmtTime(s.NotBefore))
	}
	if s.Priority != 0 {
		parts = append(parts, fmt.Sprintf("priority %d", s.Priority))
	}
	if s.Timeout > 0 {
		parts = append(parts, fmt.Sprintf("timeout %v", s.Timeout))
	}
	return strings.Join(parts, "; ")
}

// attemptText is show's line for one ended attempt: its state, exit code,
// host, start, end and error.
func attemptText(a jobstore.AttemptEnd) string {
	var b strings.Builder
	b.WriteString(string(a.State))
	if a.Interrupted {
		b.WriteString(" (interrupted: not counted)")
	}
	if a.ExitCode != nil {
		fmt.Fprintf(&b, ", exit %d", *a.ExitCode)
	}
	if a.Host != "" {
		fmt.Fprintf(&b, ", on %s", a.Host)
	}
	if a.StartedAt != nil {
		fmt.Fprintf(&b, ", %s to %s (ran %s)", fmtTime(*a.StartedAt), fmtTime(a.EndedAt), fmtAge(a.EndedAt.Sub(*a.StartedAt)))
	} else if !a.EndedAt.IsZero() {
		fmt.Fprintf(&b, ", ended %s", fmtTime(a.EndedAt))
	}
	if a.Error != "" {
		b.WriteString(": " + a.Error)
	}
	return b.String()
}

// untilText is "in 1m30s" for a time in the future, "" otherwise.
func untilText(t, now time.Time) string {
	if d := t.Sub(now); d > 0 {
		return " (in " + fmtAge(d) + ")"
	}
	return ""
}
