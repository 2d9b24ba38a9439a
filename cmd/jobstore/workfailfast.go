package main

import (
	"time"

	"github.com/axqua/jobstore"
)

// A worker stops taking jobs when its command cannot run them: when the
// command cannot be started (one job fails: the next is claimed only once
// a command has started), or when failFast.after jobs in a row fail fast
// the same way. It exits with exitBroken (7), saying why.

// Defaults of --fail-fast and --fail-fast-within.
const (
	defaultFailFast       = 5
	defaultFailFastWithin = time.Second
)

// failFast is when a run of failures stops the worker: after jobs in a
// row whose command exited within of its start, all with one exit status
// other than 0. after 0: never.
type failFast struct {
	after  int
	within time.Duration
}

// fastStreak is the current run of jobs that failed fast the same way.
type fastStreak struct {
	n     int
	code  int    // their exit status
	first string // the first job's ID
	last  string // the last job's ID
}

// add counts end, of job id, and reports whether the run is now long
// enough to stop the worker. A job that failed slowly, with another
// status, that succeeded, was cancelled or whose command did not run
// starts the count again.
func (s *fastStreak) add(ff failFast, end jobEnd, id string) bool {
	fast := end.state == jobstore.Failed && end.exitCode != nil && end.ran > 0 && end.ran <= ff.within
	switch {
	case !fast:
		s.n = 0
		return false
	case s.n == 0 || *end.exitCode != s.code:
		*s = fastStreak{code: *end.exitCode, first: id}
	}
	s.n++
	s.last = id
	return ff.after > 0 && s.n >= ff.after
}

// commandBroken is why a worker stopped taking jobs: its command cannot
// run them.
type commandBroken struct{ why string }

func (e *commandBroken) Error() string { return "jobstore work: stopped taking jobs: " + e.why }
