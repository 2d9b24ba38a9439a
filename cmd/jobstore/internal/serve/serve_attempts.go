package serve

import (
	"fmt"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/jobview"
)

// attemptFields are a job's attempts as its page lists them, oldest first,
// numbered as list and show number them (numberedAttempts): each one that
// ended, then the one its status is about, if it is not among them.
func attemptFields(st *jobstore.JobStatus) []field {
	var out []field
	for _, n := range jobview.NumberedAttempts(st) {
		a := n.Ended
		if a == nil {
			out = append(out, field{n.Label, currentAttemptLine(st)})
			continue
		}
		line := string(a.State)
		if a.Interrupted {
			line += " (interrupted: put back in the queue, not counted)"
		}
		if a.StartedAt != nil {
			line += ", started " + jobview.FmtTimePtr(a.StartedAt)
		}
		if a.Host != "" {
			line += " on " + a.Host
		}
		line += ", ended " + jobview.FmtTime(a.EndedAt)
		if a.ExitCode != nil {
			line += fmt.Sprintf(", exit code %d", *a.ExitCode)
		}
		if a.Error != "" {
			line += ": " + a.Error
		}
		out = append(out, field{n.Label, line})
	}
	return out
}

// currentAttemptLine is the page's line for the attempt st is about.
func currentAttemptLine(st *jobstore.JobStatus) string {
	line := string(st.State)
	if st.StartedAt != nil {
		line += ", started " + jobview.FmtTimePtr(st.StartedAt)
	}
	if st.Host != "" {
		line += " on " + st.Host
	}
	if st.FinishedAt != nil {
		line += ", finished " + jobview.FmtTimePtr(st.FinishedAt)
	}
	if st.Error != "" {
		line += ": " + st.Error
	}
	return line
}

// canRetry reports whether a job in state may be retried (Retry's rule:
// it ended failed, lost or cancelled).
func canRetry(st *jobstore.JobStatus) bool {
	return st != nil && (st.State == jobstore.Failed || st.State == jobstore.Lost || st.State == jobstore.Cancelled)
}
