package main

import (
	"time"

	"github.com/axqua/jobstore"
)

// jobEnd is how a job's run ended, for the worker's end line.
type jobEnd struct {
	state   jobstore.State // how the attempt ended, as written; "" when nothing was written
	outcome jobstore.State // the state meant, written or not
	retryAt *time.Time     // the job is queued again for a retry, due then
	// interrupted: the worker's forced stop stopped the command; nothing
	// was written, and the Worker queues the job again.
	interrupted bool
	exitCode    *int
	signal      string // the signal that ended the command, Unix
	message     string
	err         error         // a failure of the worker's own: the outcome may not be recorded
	fatal       bool          // the command cannot be run at all: the worker stops taking jobs
	startErr    error         // why the command could not be started, when fatal
	ran         time.Duration // from the command's start to its exit; 0 if it did not start
}

// shownState is the job's state once the attempt ended, as the end line
// says it: queued when it is to run again (a retry, or interrupted), ""
// when nothing was written.
func (end *jobEnd) shownState() string {
	if end.retryAt != nil || end.interrupted {
		return string(jobstore.Queued)
	}
	return string(end.state)
}

// finished notes how Finish of the run went (err): nothing written, or
// the job queued again for a retry, which its message then tells.
func (end *jobEnd) finished(run *jobstore.Run, err error) {
	if err != nil {
		end.err, end.state = err, ""
		return
	}
	if st := run.Status(); st.State == jobstore.Queued {
		end.retryAt, end.message = st.RetryAt, st.Message
	}
}
