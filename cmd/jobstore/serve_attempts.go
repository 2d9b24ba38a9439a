package main

import (
	"fmt"

	"github.com/axqua/jobstore"
)

// retryAvailable reports whether the library can queue a finished job
// again: the job's page then offers a retry.
const retryAvailable = false

// attemptFields are the job's attempts as its page lists them: the one
// its status is about.
func attemptFields(st *jobstore.JobStatus) []field {
	if st == nil || st.Attempt == 0 {
		return nil
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
	return []field{{fmt.Sprintf("attempt %d", st.Attempt), line}}
}

// retryJob queues a finished job again.
func retryJob(dir jobstore.JobDir) error {
	return &jobstore.Error{Op: "retry", Path: string(dir), Sentinel: jobstore.ErrInvalid,
		Msg: "this jobstore cannot retry a job", Remedy: "submit the job again under a new ID"}
}
