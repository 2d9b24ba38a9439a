package jobview

import (
	"fmt"
	"strings"
	"time"

	"github.com/axqua/jobstore"
)

// How list and show tell a job's attempts: which attempt of how many it
// is at, when a pending retry is due, and each ended attempt.

// AttemptNote is list's and show's note on a job's attempts, numbered as
// jobstore.NumberAttempts numbers them: "attempt 2/3" (the one running,
// due next, or the last that ended, of the last its policy allows), with
// ", retried by hand" when Retry gave the job more attempts than its
// max_attempts (when a pending retry is due, ScheduleNote says); "" for a
// job of one attempt that has kept none.
func AttemptNote(spec *jobstore.JobSpec, st *jobstore.JobStatus) string {
	if spec == nil || st == nil || (spec.MaxAttempts <= 1 && len(st.Attempts) == 0) {
		return ""
	}
	n := jobstore.NumberAttempts(*spec, st)
	note := fmt.Sprintf("attempt %d/%d", n.Current, n.Limit)
	if n.ByHand {
		note += ", retried by hand"
	}
	return note
}

// NumberedAttempt is one attempt of a job as show and serve list it.
type NumberedAttempt struct {
	Label string               // "attempt N"
	Ended *jobstore.AttemptEnd // nil: the attempt the status is about, not among the ended ones
}

// NumberedAttempts is each attempt of the job whose status is st, oldest
// first, numbered as jobstore.NumberAttempts numbers them: every ended
// attempt the status keeps, then the one the status is about when it is
// not among them (running, or ended in a job that keeps no attempts).
func NumberedAttempts(st *jobstore.JobStatus) []NumberedAttempt {
	if st == nil {
		return nil
	}
	n := jobstore.NumberAttempts(jobstore.JobSpec{}, st) // numbers need no policy
	out := make([]NumberedAttempt, 0, len(st.Attempts)+1)
	for i := range st.Attempts {
		out = append(out, NumberedAttempt{Label: fmt.Sprintf("attempt %d", n.Ended[i]), Ended: &st.Attempts[i]})
	}
	if st.State == jobstore.Running || (st.State.Terminal() && len(st.Attempts) == 0 && st.Attempt > 0) {
		out = append(out, NumberedAttempt{Label: fmt.Sprintf("attempt %d", n.Current)})
	}
	return out
}

// ScheduleText is show's line on how a job is to run: its retry policy,
// not_before, priority and timeout, those set; "" when none is.
func ScheduleText(s *jobstore.JobSpec) string {
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
		parts = append(parts, "not before "+FmtTime(s.NotBefore))
	}
	if s.Priority != 0 {
		parts = append(parts, fmt.Sprintf("priority %d", s.Priority))
	}
	if s.Timeout > 0 {
		parts = append(parts, fmt.Sprintf("timeout %v", s.Timeout))
	}
	return strings.Join(parts, "; ")
}

// AttemptText is show's line for one ended attempt: its state, exit code,
// host, start, end and error.
func AttemptText(a jobstore.AttemptEnd) string {
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
		fmt.Fprintf(&b, ", %s to %s (ran %s)", FmtTime(*a.StartedAt), FmtTime(a.EndedAt), FmtAge(a.EndedAt.Sub(*a.StartedAt)))
	} else if !a.EndedAt.IsZero() {
		fmt.Fprintf(&b, ", ended %s", FmtTime(a.EndedAt))
	}
	if a.Error != "" {
		b.WriteString(": " + a.Error)
	}
	return b.String()
}

// UntilText is "in 1m30s" for a time in the future, "" otherwise.
func UntilText(t, now time.Time) string {
	if d := t.Sub(now); d > 0 {
		return " (in " + FmtAge(d) + ")"
	}
	return ""
}
