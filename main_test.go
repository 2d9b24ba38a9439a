package jobstore_test

import (
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/axqua/jobstore/internal/prereq"
	"github.com/axqua/jobstore/internal/testdir"
)

// childEnv selects a child role (roles_test.go) when the test binary
// re-executes itself as a helper process.
const childEnv = "JOBSTORE_TEST_CHILD"

func TestMain(m *testing.M) {
	if role := os.Getenv(childEnv); role != "" {
		body, ok := roles[role]
		if !ok {
			fmt.Fprintf(os.Stderr, "jobstore test child: unknown role %q\n", role)
			os.Exit(2)
		}
		os.Exit(body())
	}
	code := m.Run()
	removeScaleFixtures()
	prereq.Report("github.com/axqua/jobstore")
	os.Exit(code)
}

// childCommand returns a command that runs this test binary as the child
// role, with extra environment entries ("K=V"). The caller starts it.
func childCommand(t testing.TB, role string, env ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatalf("cannot find the test binary: %v", err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(append(os.Environ(), childEnv+"="+role), env...)
	cmd.Stderr = os.Stderr
	return cmd
}

// tempDir is t.TempDir, except under Wine, where os.RemoveAll fails and would
// fail every test at cleanup (see internal/testdir). Every test uses it.
func tempDir(t testing.TB) string {
	t.Helper()
	return testdir.New(t)
}
