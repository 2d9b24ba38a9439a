package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/remedy"
	"github.com/axqua/jobstore/cmd/jobstore/internal/termtext"
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

// commandLine is the worker's command as the worker's messages name it.
func (wk *worker) commandLine() string {
	return termtext.EscapeTerminal(strings.Join(wk.argv, " "))
}

// cannotStart is the error of a worker whose command could not be started
// for job run (err: why).
func (wk *worker) cannotStart(run *jobstore.Run, err error) error {
	why := fmt.Sprintf("%s cannot be started on this host: %v", wk.commandLine(), err)
	if errors.Is(err, fs.ErrNotExist) {
		if path, lerr := exec.LookPath(wk.argv[0]); lerr == nil {
			if _, serr := os.Stat(path); serr == nil {
				why += " (the file exists: the interpreter its #! line names, or a library it needs, is missing)"
			}
		}
	}
	why += fmt.Sprintf("; job %s failed, and no other job was started", run.Dir().ID())
	return remedy.WithCLIRemedy(&commandBroken{why: why},
		fmt.Sprintf("fix the command on this host, then submit job %s again", run.Dir().ID()))
}

// failsFast is the error of a worker whose last jobs failed fast (wk.streak).
// The caller holds wk.mu.
func (wk *worker) failsFast() error {
	s := wk.streak
	jobs := fmt.Sprintf("the last %d jobs (%s to %s) each", s.n, s.first, s.last)
	if s.n == 1 {
		jobs = "job " + s.last
	}
	why := fmt.Sprintf("%s failed within %v of their start with exit status %d: %s fails at once on this host",
		jobs, wk.failFast.within, s.code, wk.commandLine())
	return remedy.WithCLIRemedy(&commandBroken{why: why},
		"see stderr.log in those jobs' directories, fix the command, then submit them again; --fail-fast 0 turns this check off")
}

// brokenWhy is why the worker stopped taking jobs (wk.broken), without
// the remedy. The caller holds wk.mu.
func (wk *worker) brokenWhy() string {
	var cb *commandBroken
	if errors.As(wk.broken, &cb) {
		return cb.why
	}
	return ""
}
