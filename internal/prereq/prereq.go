// Package prereq is how the jobstore module's tests skip for a missing
// prerequisite (root, strace, bindfs, /dev/fuse, python3, GlusterFS, or
// JOBSTORE_LONG=1 for a long test): every such skip names what is missing
// and the one command that runs every test, and is counted, so that a
// package's TestMain ends with a summary that a plain "go test ./..."
// shows (it is internal: importers of jobstore never see it).
package prereq

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
)

// FullRun is the one command that runs every test of the module, as root,
// with every tool it needs (installed by .ci/install.sh): none skips there.
const FullRun = "sudo bash .ci/run"

// skipped counts this test binary's skips by prerequisite.
var skipped = struct {
	sync.Mutex
	by map[string]int
}{by: map[string]int{}}

// Skip skips tb because prerequisite (a short name: "root", "strace",
// "python3", ...) is missing; msg says what is missing and how to get it.
// The skip message ends with FullRun, and Summary counts the skip.
func Skip(tb testing.TB, prerequisite, msg string) {
	tb.Helper()
	skipped.Lock()
	skipped.by[prerequisite]++
	skipped.Unlock()
	tb.Skip(msg + "; run them all with: " + FullRun)
}

// LongEnv set to 1 runs the long tests: soaks and the two-host drains,
// which take tens of seconds to minutes each. CI sets it (.ci/run); without
// it a plain "go test ./..." of the module stays within minutes on a
// loaded laptop.
const LongEnv = "JOBSTORE_LONG"

// LongRun reports whether LongEnv is set to 1.
func LongRun() bool { return os.Getenv(LongEnv) == "1" }

// Long skips tb unless LongRun: tb is a long test, what says what it
// does at length ("500 jobs drained by 8 workers on 2 mounts"). The skip
// names LongEnv and is counted by Summary under "LongEnv=1".
func Long(tb testing.TB, what string) {
	tb.Helper()
	if LongRun() {
		return
	}
	Skip(tb, LongEnv+"=1", "a long test ("+what+"): set "+LongEnv+"=1 to run it")
}

// Summary is one line saying how many tests Skip skipped, for which
// prerequisites, and FullRun; "" when none did.
func Summary(pkg string) string {
	skipped.Lock()
	defer skipped.Unlock()
	total, names := 0, make([]string, 0, len(skipped.by))
	for name, n := range skipped.by {
		total += n
		names = append(names, name)
	}
	if total == 0 {
		return ""
	}
	slices.Sort(names)
	parts := make([]string, len(names))
	for i, name := range names {
		parts[i] = fmt.Sprintf("%s %d", name, skipped.by[name])
	}
	plural := "s"
	if total == 1 {
		plural = ""
	}
	return fmt.Sprintf("%s: %d test%s skipped for missing prerequisites (%s); run them all with: %s\n",
		pkg, total, plural, strings.Join(parts, ", "), FullRun)
}

// Report writes Summary(pkg) to the test binary's stdout, so that the test
// output carries it wherever it goes: go test -v, go test -json, a failing
// package's output, a log of CI. go test shows a passing package's output
// only under -v, so without -v the line also goes to the terminal (if the
// process has one), where a plain "go test ./..." shows it; there, a bare
// "go test" (directory mode, which prints the output) shows it twice. Call
// it from TestMain after m.Run.
func Report(pkg string) {
	report(Summary(pkg), testing.Verbose(), os.Stdout, openTTY)
}

// report writes line to stdout and, unless verbose, to the terminal that
// tty opens, if any.
func report(line string, verbose bool, stdout io.Writer, tty func() (io.WriteCloser, error)) {
	if line == "" {
		return
	}
	_, _ = io.WriteString(stdout, line)
	if verbose {
		return
	}
	w, err := tty()
	if err != nil {
		return
	}
	defer w.Close()
	_, _ = io.WriteString(w, line)
}

// openTTY opens the controlling terminal for writing.
func openTTY() (io.WriteCloser, error) {
	return os.OpenFile("/dev/tty", os.O_WRONLY, 0)
}
