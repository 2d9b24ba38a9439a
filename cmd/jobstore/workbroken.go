package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"strings"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/remedy"
	"github.com/axqua/jobstore/cmd/jobstore/internal/termtext"
)

// This file is how a worker finds its command broken (workfailfast.go
// says when): a command that cannot be started, or that fails fast, and
// the error that stops the worker with exitBroken.

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
