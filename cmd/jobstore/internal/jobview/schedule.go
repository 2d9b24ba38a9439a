package jobview

import (
	"time"

	"github.com/axqua/jobstore"
)

// DueJSON is what list's and show's JSON add on a queued job's schedule:
// "due_at", when it may start (jobstore.DueAt), present only when its not_before or
// a pending retry's retry_at sets one (it may be past), and "retrying",
// true when that is retry_at.
type DueJSON struct {
	DueAt    *time.Time `json:"due_at,omitempty"`
	Retrying bool       `json:"retrying,omitempty"`
}

// NewDueJSON is DueJSON of a job.
func NewDueJSON(spec *jobstore.JobSpec, st *jobstore.JobStatus) DueJSON {
	due, retry := jobstore.DueAt(spec, st)
	if due.IsZero() {
		return DueJSON{}
	}
	return DueJSON{DueAt: &due, Retrying: retry}
}
