package proc

import (
	"os"
	"testing"

	"golang.org/x/sys/windows"
)

func TestJudge_Windows(t *testing.T) {
	if s := Scope(); s != "windows" {
		t.Fatalf("Scope() = %q, want \"windows\"", s)
	}
	st, self := Probe(os.Getpid())
	if st != Alive || self == "" {
		t.Fatalf("this process: %v %q", st, self)
	}

	// The child exits with STILL_ACTIVE's value (259): an exit code cannot
	// tell it from a live process; only the signalled handle can.
	const stillActive = 259
	child, stdin := startChild(t, stillActive)
	pid := child.Process.Pid
	st, childStart := Probe(pid)
	if st != Alive || childStart == "" {
		t.Fatalf("live child: %v %q", st, childStart)
	}
	for _, tc := range []struct {
		name  string
		start string
		want  State
	}{
		{"a live child", childStart, Alive},
		{"pid reused: another creation time", childStart + "1", Dead},
		{"alive, start unknown: may be a reused pid", "", Unknown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Judge("windows", pid, tc.start); got != tc.want {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}

	// Hold a handle so that the pid cannot be reused: the process object of
	// the exited child stays, and only its signalled state says it exited.
	h, err := windows.OpenProcess(windows.SYNCHRONIZE, false, uint32(pid))
	if err != nil {
		t.Fatalf("OpenProcess(%d): %v", pid, err)
	}
	t.Cleanup(func() {
		if h != 0 {
			windows.CloseHandle(h)
		}
	})
	stdin.Close()
	if err := child.Wait(); err == nil || child.ProcessState.ExitCode() != stillActive {
		t.Fatalf("child: %v, exit code %d, want %d", err, child.ProcessState.ExitCode(), stillActive)
	}
	if got := Judge("windows", pid, childStart); got != Dead {
		t.Fatalf("exited child, pid held: %v", got)
	}
	windows.CloseHandle(h)
	h = 0
	if got := Judge("windows", pid, childStart); got != Dead {
		t.Fatalf("exited child, pid released: %v", got)
	}
	if got, _ := Probe(1 << 30); got != Dead {
		t.Fatalf("no such pid: %v", got)
	}
}
