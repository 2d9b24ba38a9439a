// Command jobstore submits, watches, lists, shows, reconciles and checks the
// job records kept by package jobstore, and runs a demo of all of it.
//
// It is built on the standard library alone (flag, text/tabwriter,
// encoding/json) and the jobstore package, so the module's dependency list
// stays short. Run "jobstore help" for the commands and the exit codes.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"
)

// Exit codes, documented in the usage text (usageText) and the README.
const (
	exitOK           = 0 // success
	exitUnsuccessful = 1 // watch: the job ended failed, cancelled or lost; check, reconcile: problems found; cancel: the job had ended
	exitUsage        = 2 // unknown command, missing or extra argument, bad flag value
	exitRuntime      = 3 // a record could not be read or written, not a job, ...
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// env is what a command writes to, and what it knows about it.
type env struct {
	stdout, stderr io.Writer
	// tty: stdout is a terminal, so watch redraws one line with '\r'
	// instead of printing a line per update.
	tty bool
}

// command is one subcommand. run defines its flags on fs, parses args with
// parseArgs before doing anything else (its help text is made by running it
// with --help), then does the work; its error decides the exit code (see
// exitCode).
type command struct {
	name    string
	args    string // synopsis after the name: "ROOT [--json] [--rebuild]"
	summary string // one line, for the command list
	doc     string // what it does, what it prints, its exit codes
	run     func(e *env, fs *flag.FlagSet, args []string) error
}

// commands lists the subcommands in the order "jobstore help" shows them.
func commands() []*command {
	return []*command{demoCmd(), submitCmd(), listCmd(), showCmd(), watchCmd(), cancelCmd(), reconcileCmd(), checkCmd()}
}

func findCommand(name string) *command {
	for _, c := range commands() {
		if c.name == name {
			return c
		}
	}
	return nil
}

// run runs the command line args (without the program name) and returns the
// exit code. Errors are printed to stderr as one line.
func run(args []string, stdout, stderr io.Writer) int {
	e := &env{stdout: stdout, stderr: stderr, tty: isTerminal(stdout)}
	if len(args) == 0 {
		fmt.Fprint(stderr, usageText())
		return exitUsage
	}
	name, rest := args[0], args[1:]
	switch name {
	case "-h", "-help", "--help", "help":
		if name == "help" && len(rest) > 0 {
			c := findCommand(rest[0])
			if c == nil || len(rest) > 1 {
				return e.fail(&usageError{msg: fmt.Sprintf("help: no command %q", strings.Join(rest, " ")), remedy: "run 'jobstore help' for the list of commands"})
			}
			fmt.Fprint(stdout, c.usage())
			return exitOK
		}
		fmt.Fprint(stdout, usageText())
		return exitOK
	}
	c := findCommand(name)
	if c == nil {
		return e.fail(&usageError{msg: fmt.Sprintf("unknown command %q", name), remedy: "run 'jobstore help' for the list of commands"})
	}
	fs := flag.NewFlagSet("jobstore "+c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // parse errors are reported by fail, in one line
	err := c.run(e, fs, rest)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, c.usage())
		return exitOK
	}
	var ue *usageError
	if errors.As(err, &ue) && ue.cmd == "" {
		ue.cmd = c.name
	}
	return e.fail(err)
}

// fail prints err (if any) to stderr as one line and returns its exit code.
func (e *env) fail(err error) int {
	code := exitCode(err)
	var ex *exitError
	if err != nil && !errors.As(err, &ex) {
		fmt.Fprintln(e.stderr, oneLine(errorLine(err)))
	}
	return code
}

func exitCode(err error) int {
	var ue *usageError
	var ex *exitError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ue):
		return exitUsage
	case errors.As(err, &ex):
		return ex.code
	default:
		return exitRuntime
	}
}

// errorLine is the text of an error as printed: a *jobstore.Error already
// reads "jobstore: op path: what. Remedy: ..."; others get the prefix, and
// a remedy from what kind of error they are.
func errorLine(err error) string {
	s := err.Error()
	if !strings.HasPrefix(s, "jobstore") {
		s = "jobstore: " + s
	}
	if !strings.Contains(s, ". Remedy: ") {
		s += ". Remedy: " + fallbackRemedy(err)
	}
	return s
}

// fallbackRemedy is the remedy of an error that came without one.
func fallbackRemedy(err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "check the path"
	case errors.Is(err, fs.ErrPermission):
		return "give this user access to the file and its directory"
	default:
		return "check the path, the permissions and the disk, then try again"
	}
}

// usageError is a mistake on the command line: exit code 2.
type usageError struct {
	cmd    string // the subcommand, if known
	msg    string
	remedy string // default: read the command's help
}

func (e *usageError) Error() string {
	prefix, remedy := "jobstore", e.remedy
	if e.cmd != "" {
		prefix += " " + e.cmd
		if remedy == "" {
			remedy = "run 'jobstore help " + e.cmd + "'"
		}
	}
	if remedy == "" {
		remedy = "run 'jobstore help'"
	}
	return prefix + ": " + e.msg + ". Remedy: " + remedy
}

func usagef(format string, args ...any) error { return &usageError{msg: fmt.Sprintf(format, args...)} }

// exitError ends a command with a code and nothing more on stderr: the
// command has already said why on stdout (a failed job, problems found).
type exitError struct{ code int }

func (e *exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// parseArgs parses flags and positional arguments in any order ("list ROOT
// --json" and "list --json ROOT" alike; the flag package alone stops at the
// first non-flag). Everything after "--" is positional. It requires between
// minPos and maxPos positional arguments (maxPos < 0: no limit); names is
// what they are called in errors.
func parseArgs(fs *flag.FlagSet, args []string, minPos, maxPos int, names string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, usagef("%v", err)
		}
		consumed := len(args) - fs.NArg()
		rest := fs.Args()
		if consumed > 0 && args[consumed-1] == "--" {
			pos = append(pos, rest...)
			break
		}
		if len(rest) == 0 {
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	switch {
	case len(pos) < minPos:
		return nil, usagef("missing %s", names)
	case maxPos >= 0 && len(pos) > maxPos:
		return nil, usagef("unexpected argument %q (expects %s)", pos[maxPos], names)
	}
	return pos, nil
}

// positiveDuration rejects zero and negative durations for flag name.
func positiveDuration(name string, d time.Duration) error {
	if d <= 0 {
		return usagef("--%s must be positive, got %v", name, d)
	}
	return nil
}
