package prereq

import (
	"fmt"
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
