package supervise

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// pids lists the pids of ps.
func pids(ps []procInfo) []int {
	var out []int
	for _, p := range ps {
		out = append(out, p.pid)
	}
	return out
}

// The supervisor's view of its tree comes from /proc/PID/stat, whose
// command name is whatever the program is called: a name made to look like
// the fields after it (parentheses, spaces, a state letter) does not move
// them. A zombie is not a live descendant; a signalled process is the one
// found.
func TestProcTree_HostileNamesZombiesAndSignals(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep command:", err)
	}
	link := filepath.Join(t.TempDir(), "x) Z 1 (y")
	require.NoError(t, os.Symlink(sleep, link))
	child := exec.Command(link, "60")
	require.NoError(t, child.Start())
	t.Cleanup(func() { _ = child.Process.Kill(); _ = child.Wait() })
	self := os.Getpid()

	p, ok := readProc(child.Process.Pid)
	require.True(t, ok)
	require.Equal(t, self, p.ppid)
	require.False(t, p.zombie)
	require.NotZero(t, p.start)
	require.Contains(t, pids(descendants(self)), child.Process.Pid)

	signalProc(self, p, unix.SIGKILL)
	for deadline := time.Now().Add(zombieTimeout); ; time.Sleep(signalSettle / 10) {
		if now, ok := readProc(child.Process.Pid); ok && now.zombie {
			break
		}
		require.False(t, time.Now().After(deadline), "the killed child is no zombie after %v", zombieTimeout)
	}
	require.NotContains(t, pids(descendants(self)), child.Process.Pid, "a zombie counted as live")
	require.Error(t, child.Wait())
	require.True(t, child.ProcessState.Sys().(syscall.WaitStatus).Signaled())

	// A process described by a start time it does not have is not signalled.
	other := exec.Command(sleep, "60")
	require.NoError(t, other.Start())
	t.Cleanup(func() { _ = other.Process.Kill(); _ = other.Wait() })
	q, ok := readProc(other.Process.Pid)
	require.True(t, ok)
	q.start++
	q.ppid = -1 // not a child of self: checked through a pidfd
	signalProc(self, q, unix.SIGKILL)
	time.Sleep(signalSettle)
	now, ok := readProc(other.Process.Pid)
	require.True(t, ok && !now.zombie, "a process other than the one found was signalled")
}

// zombieTimeout is how long a killed child may take to be a zombie: a
// hang guard, not a speed limit.
const zombieTimeout = time.Minute

// signalSettle is long enough for a SIGKILL sent to take effect.
const signalSettle = 100 * time.Millisecond
