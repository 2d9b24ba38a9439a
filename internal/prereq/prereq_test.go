package prereq

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

// recorder is a testing.TB whose Skip records its message instead of
// skipping, so that this test has no skip of its own for CI to flag.
type recorder struct {
	testing.TB
	skipped []string
}

func (r *recorder) Skip(args ...any) { r.skipped = append(r.skipped, fmt.Sprint(args...)) }

// TestSkip_CountsAndNamesTheCommand: a skip through Skip names FullRun, and
// Summary counts it under its prerequisite.
func TestSkip_CountsAndNamesTheCommand(t *testing.T) {
	if got := Summary("p"); got != "" {
		t.Fatalf("Summary before any skip = %q, want empty", got)
	}
	r := &recorder{TB: t}
	for _, prerequisite := range []string{"root", "python3", "root"} {
		Skip(r, prerequisite, prerequisite+" is missing")
	}
	if len(r.skipped) != 3 {
		t.Fatalf("Skip skipped %d times, want 3", len(r.skipped))
	}
	if want := "python3 is missing; run them all with: " + FullRun; r.skipped[1] != want {
		t.Errorf("skip message = %q, want %q", r.skipped[1], want)
	}
	want := "p: 3 tests skipped for missing prerequisites (python3 1, root 2); run them all with: " + FullRun + "\n"
	if got := Summary("p"); got != want {
		t.Errorf("Summary = %q, want %q", got, want)
	}
	if !strings.Contains(FullRun, ".ci/run") {
		t.Errorf("FullRun = %q does not run .ci/run", FullRun)
	}
}

// nopCloser is a terminal stand-in: a buffer that can be closed.
type nopCloser struct{ *strings.Builder }

func (nopCloser) Close() error { return nil }

// TestReport_TheSummaryIsInTheTestOutput: the summary goes to the test
// binary's stdout with or without -v (so piped output, go test -json and CI
// logs carry it), and to the terminal as well without -v, where go test
// hides a passing package's output.
func TestReport_TheSummaryIsInTheTestOutput(t *testing.T) {
	const line = "p: 1 test skipped for missing prerequisites (root 1); run them all with: " + FullRun + "\n"
	for _, tc := range []struct {
		name    string
		verbose bool
		tty     bool
		wantTTY string
		wantOut string
		summary string
	}{
		{name: "-v, on a terminal", verbose: true, tty: true, summary: line, wantOut: line},
		{name: "without -v, on a terminal", tty: true, summary: line, wantOut: line, wantTTY: line},
		{name: "without -v, piped, no terminal", summary: line, wantOut: line},
		{name: "-v, no terminal", verbose: true, summary: line, wantOut: line},
		{name: "nothing skipped", tty: true, summary: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, term strings.Builder
			tty := func() (io.WriteCloser, error) {
				if !tc.tty {
					return nil, errors.New("no terminal")
				}
				return nopCloser{&term}, nil
			}
			report(tc.summary, tc.verbose, &out, tty)
			if out.String() != tc.wantOut {
				t.Errorf("stdout = %q, want %q", out.String(), tc.wantOut)
			}
			if term.String() != tc.wantTTY {
				t.Errorf("terminal = %q, want %q", term.String(), tc.wantTTY)
			}
		})
	}
}

// TestLong_SkipsUnlessLongEnvIsSet: a long test runs only with
// JOBSTORE_LONG=1, and its skip says how to run it.
func TestLong_SkipsUnlessLongEnvIsSet(t *testing.T) {
	for _, c := range []struct {
		env     string
		skipped bool
	}{
		{"", true},
		{"0", true},
		{"1", false},
	} {
		t.Run("JOBSTORE_LONG="+c.env, func(t *testing.T) {
			t.Setenv(LongEnv, c.env)
			r := &recorder{TB: t}
			Long(r, "a soak")
			if got := len(r.skipped) == 1; got != c.skipped {
				t.Fatalf("skipped = %v, want %v", got, c.skipped)
			}
			if c.skipped && !strings.Contains(r.skipped[0], "set JOBSTORE_LONG=1 to run it") {
				t.Errorf("skip message %q does not say how to run it", r.skipped[0])
			}
		})
	}
}
