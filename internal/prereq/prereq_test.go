package prereq

import (
	"strings"
	"testing"
)

// TestSkip_CountsAndNamesTheCommand: a skip through Skip names FullRun, and
// Summary counts it under its prerequisite.
func TestSkip_CountsAndNamesTheCommand(t *testing.T) {
	if got := Summary("p"); got != "" {
		t.Fatalf("Summary before any skip = %q, want empty", got)
	}
	for _, tt := range []struct{ name, prerequisite string }{{"a", "root"}, {"b", "python3"}, {"c", "root"}} {
		t.Run(tt.name, func(t *testing.T) {
			t.Cleanup(func() {
				if !t.Skipped() {
					t.Error("Skip did not skip")
				}
			})
			Skip(t, tt.prerequisite, "missing")
		})
	}
	want := "p: 3 tests skipped for missing prerequisites (python3 1, root 2); run them all with: " + FullRun + "\n"
	if got := Summary("p"); got != want {
		t.Errorf("Summary = %q, want %q", got, want)
	}
	if !strings.Contains(FullRun, ".ci/run") {
		t.Errorf("FullRun = %q does not run .ci/run", FullRun)
	}
}
