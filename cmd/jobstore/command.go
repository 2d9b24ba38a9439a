package main

import (
	"fmt"
	"io"
	"time"

	"github.com/axqua/jobstore/cmd/jobstore/internal/remedy"
	"github.com/spf13/pflag"
)

// Exit codes, documented in the usage text (usageText) and the README.
const (
	exitOK           = 0 // success
	exitUnsuccessful = 1 // watch: the job ended failed, cancelled or lost; check, reconcile: problems found; cancel: the job had ended; rm, prune: a job was not removed
	exitUsage        = 2 // unknown command, missing or extra argument, bad flag value
	exitRuntime      = 3 // a record could not be read or written, not a job, ...
	exitBroken       = 7 // work: its command cannot run jobs (cannot be started, or fails fast)
	// 130 and 143: watch, list --watch stopped by SIGINT or SIGTERM (stop.go)
)

// env is what a command writes to, and what it knows about it.
type env struct {
	stdout, stderr io.Writer
	// term is stdout's terminal: a display redrawn in place (watch, list
	// --watch) is fitted to its size; nil when stdout is not a terminal (a
	// line is printed per update).
	term *terminal
}

// command is one subcommand. define defines its flags on a flag set and
// returns the function that does the work once they are parsed; its error
// decides the exit code (see exitStatusOf).
type command struct {
	name    string
	args    string // synopsis after the name: "ROOT [--json] [--rebuild]"
	summary string // one line, for the command list
	doc     string // what it does, what it prints, its exit codes
	// minPos and maxPos bound the arguments that are not flags (maxPos <
	// 0: no limit); posNames is what they are called in errors ("ROOT").
	minPos, maxPos int
	posNames       string
	// commandAfterDash: the arguments after "--" are a command to run,
	// not counted among the positional ones (work).
	commandAfterDash bool
	// validArgs are the only values of its one positional argument, offered
	// by shell completion (none: a directory is offered).
	validArgs []string
	define    func(fs *pflag.FlagSet) runFunc
}

// runFunc does a command's work once its flags are parsed: args are its
// arguments as typed (after the command's name), for naming a flag as the
// user spelled it (flagSpelling); pos are the positional ones (for a
// commandAfterDash command, those before "--").
type runFunc func(e *env, args, pos []string) error

// exitError ends a command with a code and nothing more on stderr: the
// command has already said why on stdout (a failed job, problems found).
type exitError struct{ code int }

func (e *exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// positiveDuration rejects zero and negative durations for a flag, named
// as the user spelled it (flagSpelling).
func positiveDuration(spelled string, d time.Duration) error {
	if d <= 0 {
		return remedy.Usagef("%s must be positive, got %v", spelled, d)
	}
	return nil
}
