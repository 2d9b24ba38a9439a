// Command jobstore submits, watches, lists, shows, reconciles, checks and removes the
// job records kept by package jobstore, and runs a demo of all of it.
//
// It is built on the jobstore package, the standard library (flag,
// text/tabwriter, encoding/json) and golang.org/x/term (a terminal's
// size), so the module's dependency list stays short. Run "jobstore help"
// for the commands and the exit codes.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"runtime/debug"
	"strings"
	"time"
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

func main() {
	code := run(os.Args[1:], os.Stdout, os.Stderr)
	if sig := stopSignalOf(code); sig != nil {
		endAs(sig, code) // a watcher the user stopped (stop.go)
	}
	os.Exit(code)
}

// env is what a command writes to, and what it knows about it.
type env struct {
	stdout, stderr io.Writer
	// width reports stdout's width in columns when stdout is a terminal
	// (watch then redraws one line with '\r'); nil otherwise (a line is
	// printed per update).
	width func() int
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
	return []*command{demoCmd(), submitCmd(), listCmd(), showCmd(), watchCmd(), waitCmd(), cancelCmd(), retryCmd(), workCmd(), logsCmd(), reconcileCmd(), checkCmd(), rmCmd(), pruneCmd(), serveCmd()}
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
	e := &env{stdout: stdout, stderr: stderr}
	if isTerminal(stdout) {
		e.width = terminalWidth(stdout)
	}
	if len(args) == 0 {
		fmt.Fprint(stderr, usageText())
		return exitUsage
	}
	name, rest := args[0], args[1:]
	switch name {
	case superviseArg: // how "jobstore work" runs a job's command (supervise_linux.go); not listed
		return supervise(rest, stderr)
	case "-version", "--version":
		if len(rest) > 0 {
			return e.fail(usagef("unexpected argument %q after %s", rest[0], name))
		}
		fmt.Fprint(stdout, buildVersion(debug.ReadBuildInfo()))
		return exitOK
	case "-h", "-help", "--help", "help":
		if name == "help" && len(rest) > 0 {
			c := findCommand(rest[0])
			if c == nil || len(rest) > 1 {
				return e.fail(unknownCommand("help: no command", strings.Join(rest, " ")))
			}
			fmt.Fprint(stdout, c.usage())
			return exitOK
		}
		fmt.Fprint(stdout, usageText())
		return exitOK
	}
	c := findCommand(name)
	if c == nil {
		return e.fail(unknownCommand("unknown command", name))
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
	var st *stopped
	if err != nil && !errors.As(err, &ex) && !errors.As(err, &st) {
		fmt.Fprintln(e.stderr, escapeTerminal(oneLine(errorLine(err))))
	}
	return code
}

func exitCode(err error) int {
	var ue *usageError
	var ex *exitError
	var st *stopped
	var cb *commandBroken
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ue):
		return exitUsage
	case errors.As(err, &cb):
		return exitBroken
	case errors.As(err, &ex):
		return ex.code
	case errors.As(err, &st):
		return st.exitCode()
	default:
		return exitRuntime
	}
}

// usageError is a mistake on the command line: exit code 2.
type usageError struct {
	cmd    string // the subcommand, if known
	msg    string
	remedy string // default: read the command's help
}

// Error is the mistake without the remedy (remedyText).
func (e *usageError) Error() string {
	prefix := "jobstore"
	if e.cmd != "" {
		prefix += " " + e.cmd
	}
	return prefix + ": " + e.msg
}

// remedyText is the remedy given, or else: read the command's help.
func (e *usageError) remedyText() string {
	switch {
	case e.remedy != "":
		return e.remedy
	case e.cmd != "":
		return "run 'jobstore help " + e.cmd + "'"
	}
	return "run 'jobstore help'"
}

// unknownCommand is the error for a command name that is not one,
// suggesting the command it is likely a typo of.
func unknownCommand(what, name string) error {
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	msg := fmt.Sprintf("%s %q", what, name)
	if s := suggestion(name, names); s != "" {
		msg += "; did you mean " + s + "?"
	}
	return &usageError{msg: msg, remedy: "run 'jobstore help' for the list of commands"}
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
			return nil, flagError(fs, args, err)
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

// positiveDuration rejects zero and negative durations for a flag, named
// as the user spelled it (flagSpelling).
func positiveDuration(spelled string, d time.Duration) error {
	if d <= 0 {
		return usagef("%s must be positive, got %v", spelled, d)
	}
	return nil
}

// The flag package's parse errors name a flag with one dash whatever the
// user typed; flagError rewrites them with the user's spelling.
var (
	undefinedFlagRE = regexp.MustCompile(`^flag provided but not defined: -(.*)$`)
	badValueRE      = regexp.MustCompile(`^invalid (?:boolean )?value ("(?:[^"\\]|\\.)*") for (?:flag )?-([^:]+): (.*)$`)
	needsValueRE    = regexp.MustCompile(`^flag needs an argument: -(.*)$`)
)

// flagError turns a parse error of fs over args into a usage error that
// names the flag as typed in args, and suggests the flag an unknown one is
// likely a typo of.
func flagError(fs *flag.FlagSet, args []string, err error) error {
	msg := err.Error()
	if m := undefinedFlagRE.FindStringSubmatch(msg); m != nil {
		msg = "unknown flag " + flagSpelling(args, m[1])
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		if s := suggestion(m[1], names); s != "" {
			msg += "; did you mean --" + s + "?"
		}
	} else if m := badValueRE.FindStringSubmatch(msg); m != nil {
		msg = fmt.Sprintf("%s: invalid value %s: %s", flagSpelling(args, m[2]), m[1], m[3])
	} else if m := needsValueRE.FindStringSubmatch(msg); m != nil {
		msg = flagSpelling(args, m[1]) + " needs a value"
	}
	return &usageError{msg: msg}
}

// flagSpelling is flag name as the user typed it in args ("-json" or
// "--json"), or "--name" when it is not there.
func flagSpelling(args []string, name string) string {
	for _, a := range args {
		if a == "--" {
			break
		}
		dashes := len(a) - len(strings.TrimLeft(a, "-"))
		if dashes == 0 || dashes > 2 {
			continue
		}
		if n, _, _ := strings.Cut(a[dashes:], "="); n == name {
			return a[:dashes] + name
		}
	}
	return "--" + name
}
