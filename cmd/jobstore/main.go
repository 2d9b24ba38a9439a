// Command jobstore submits, watches, lists, shows, reconciles, checks and removes the
// job records kept by package jobstore, and runs a demo of all of it.
//
// It is built on the jobstore package, the standard library,
// github.com/spf13/cobra (flags, help, suggestions, shell completion),
// github.com/mattn/go-runewidth (display widths) and golang.org/x/term (a
// terminal's size); none of them is a dependency of package jobstore. Run
// "jobstore help" for the commands and the exit codes.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/axqua/jobstore/cmd/jobstore/internal/remedy"
	"github.com/axqua/jobstore/cmd/jobstore/internal/supervise"
	"github.com/axqua/jobstore/cmd/jobstore/internal/termtext"
)

func main() {
	code := runCommandLine(os.Args[1:], os.Stdout, os.Stderr)
	if sig := stopSignalOf(code); sig != nil {
		endAs(sig, code) // a watcher the user stopped (stop.go)
	}
	os.Exit(code)
}

// runCommandLine runs the command line args (without the program name) and returns the
// exit code. Errors are printed to stderr as one line.
func runCommandLine(args []string, stdout, stderr io.Writer) int {
	e := &env{stdout: stdout, stderr: stderr, term: terminalOf(stdout)}
	if len(args) > 0 && args[0] == supervise.Arg { // how "jobstore work" runs a job's command (internal/supervise); not listed
		return supervise.Main(args[1:], stderr)
	}
	root := newCommandTree(e, args)
	root.SetArgs(withDoubleDashes(root, args))
	return e.exit(root.Execute())
}

// exit prints err (if any) to stderr as one line and returns its exit code.
func (e *env) exit(err error) int {
	code := exitStatusOf(err)
	var ex *exitError
	var st *stopped
	if err != nil && !errors.As(err, &ex) && !errors.As(err, &st) {
		fmt.Fprintln(e.stderr, termtext.EscapeTerminal(termtext.OneLine(remedy.ErrorLine(err))))
	}
	return code
}

func exitStatusOf(err error) int {
	var ue *remedy.UsageError
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
		return st.status()
	default:
		return exitRuntime
	}
}
