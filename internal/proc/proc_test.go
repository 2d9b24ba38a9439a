package proc

import (
	"io"
	"os"
	"os/exec"
	"strconv"
	"testing"
)

// childEnv makes the test binary, re-executed by startChild, wait until its
// stdin closes and then exit with the status the variable holds.
const childEnv = "PROC_TEST_CHILD_EXIT"

func TestMain(m *testing.M) {
	if code := os.Getenv(childEnv); code != "" {
		_, _ = io.Copy(io.Discard, os.Stdin)
		n, err := strconv.Atoi(code)
		if err != nil {
			os.Exit(2)
		}
		os.Exit(n)
	}
	os.Exit(m.Run())
}

// startChild starts this test binary as a child that lives until the
// returned stdin is closed, then exits with status exit. The child is killed
// and reaped at the end of the test if it has not been waited for.
func startChild(t *testing.T, exit int) (*exec.Cmd, io.WriteCloser) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatalf("cannot find the test binary: %v", err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+strconv.Itoa(exit))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return cmd, stdin
}

func TestState_String(t *testing.T) {
	for st, want := range map[State]string{Unknown: "unknown", Alive: "alive", Dead: "dead", State(42): "unknown"} {
		if got := st.String(); got != want {
			t.Errorf("State(%d).String() = %q, want %q", int(st), got, want)
		}
	}
}

// A pid is judged only within this process's own scope: whatever the pid
// names here, a record from another scope, or with none, or with no pid,
// is Unknown on every platform.
func TestJudge_OnlyWithinThisScope(t *testing.T) {
	self, start := os.Getpid(), SelfStart()
	for _, tc := range []struct {
		name  string
		scope string
		pid   int
	}{
		{"another scope", Scope() + "/elsewhere", self},
		{"no scope", "", self},
		{"pid 0", Scope(), 0},
		{"negative pid", Scope(), -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Judge(tc.scope, tc.pid, start); got != Unknown {
				t.Fatalf("Judge(%q, %d, %q) = %v, want unknown", tc.scope, tc.pid, start, got)
			}
		})
	}
}

func TestSelfStart_IsThisProcessStartToken(t *testing.T) {
	_, start := Probe(os.Getpid())
	if got := SelfStart(); got != start {
		t.Fatalf("SelfStart() = %q, Probe(self) start = %q", got, start)
	}
}
