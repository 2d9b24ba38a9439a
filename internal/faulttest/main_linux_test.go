package faulttest_test

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// allowSkipEnv lets the tests skip where FUSE cannot be mounted. Without
// it, a run that could not mount FUSE fails: "ok" from "go test" (which
// hides a passing package's output, skips included) would read as "the
// write protocol survived the faults" when nothing was tried.
const allowSkipEnv = "JOBSTORE_FAULTTEST_ALLOW_SKIP"

// TestMain checks once what mounting a FUSE filesystem needs. When
// something is missing it fails the run, naming what and how to get it,
// unless allowSkipEnv=1 lets the tests skip; under CI=true a skip is never
// allowed.
func TestMain(m *testing.M) {
	missing := missingPrerequisites()
	if len(missing) > 0 {
		ci := os.Getenv("CI") == "true"
		if ci || os.Getenv(allowSkipEnv) != "1" {
			fmt.Fprintf(os.Stderr, "faulttest: the fault-injection tests cannot run here: %s.\n", strings.Join(missing, "; "))
			if ci {
				fmt.Fprintln(os.Stderr, "faulttest: CI=true, where no test may skip.")
			} else {
				fmt.Fprintf(os.Stderr, "faulttest: run them as root with fuse3 installed, or set %s=1 to let them skip.\n", allowSkipEnv)
			}
			os.Exit(1)
		}
	}
	os.Exit(m.Run())
}

// missingPrerequisites says what this machine lacks to mount the faulty
// loopback, each with how to get it; nil when nothing is missing.
func missingPrerequisites() []string {
	var missing []string
	if os.Geteuid() != 0 {
		missing = append(missing, "mounting FUSE needs root (run as root, as CI does)")
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		missing = append(missing, fmt.Sprintf("FUSE is not available: %v", err))
	}
	if _, err := exec.LookPath("fusermount3"); err != nil {
		missing = append(missing, "fusermount3 not found (apt-get install fuse3)")
	}
	return missing
}
