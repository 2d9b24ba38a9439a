package main

import (
	"fmt"

	"github.com/axqua/jobstore"
)

// attemptFields are a job's attempts as its page lists them, oldest first:
// each one that ended (status.json's attempts), then the one its status
// is about, if it is not among them.
func attemptFields(st *jobstore.JobStatus) []field {
	if st == nil {
		return nil
	}
	var out []field
	seen := map[uint64]bool{}
	for _, a := range st.Attempts {
		seen[a.Attempt] = true
		line := string(a.State)
		if a.Interrupted {
			line += " (interrupted: put back in the queue)"
		}
		if a.StartedAt != nil {
			line += ", started " + fmtTimePtr(a.StartedAt)
		}
		if a.Host != "" {
			line += " on " + a.Host
		}
		line += ", ended " + fmtTime(a.EndedAt)
		if a.ExitCode != nil {
			line += fmt.Sprintf(", exit code %d", *a.ExitCode)
		}
		if a.Error != "" {
			line += ": " + a.Error
		}
		out = append(out, field{fmt.Sprintf("attempt %d", a.Attempt), line})
	}
	if st.Attempt == 0 || seen[st.Attempt] {
		return out
	}
	line := string(st.State)
	if st.StartedAt != nil {
		line += ", started " + fmtTimePtr(st.StartedAt)
	}
	if st.Host != "" {
		line += " on " + st.Host
	}
	if st.FinishedAt != nil {
		line += ", finished " + fmtTimePtr(st.FinishedAt)
	}
	if st.Error != "" {
		line += ": " + st.Error
	}
	return append(out, field{fmt.Sprintf("attempt %d", st.Attempt), line})
}

// canRetry reports whether a job in state may be retried (Retry's rule:
// it ended failed, lost or cancelled).
func canRetry(st *jobstore.JobStatus) bool {
	return st != nil && (st.State == jobstore.Failed || st.State == jobstore.Lost || st.State == jobstore.Cancelled)
}
