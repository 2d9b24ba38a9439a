package main

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// burn spins until this process has used d more CPU time (getrusage).
func burn(t *testing.T, d time.Duration) {
	t.Helper()
	start, err := selfCPU()
	if err != nil {
		t.Fatal(err)
	}
	for {
		now, err := selfCPU()
		if err != nil {
			t.Fatal(err)
		}
		if now-start >= d {
			return
		}
	}
}

// cpuBurned is how much CPU the test burns: many clock ticks, so the
// comparison is not lost in their rounding.
const cpuBurned = 200 * time.Millisecond

func TestTreeCPU_CountsTheProcessNamedByThePIDFile(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(os.Getpid())+"\nmore lines\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tree := range []bool{false, true} {
		t.Run("tree="+strconv.FormatBool(tree), func(t *testing.T) {
			before, err := treeCPU(pidFile, tree)
			if err != nil {
				t.Fatal(err)
			}
			burn(t, cpuBurned)
			after, err := treeCPU(pidFile, tree)
			if err != nil {
				t.Fatal(err)
			}
			if got := after - before; got < cpuBurned-3*clockTick {
				t.Errorf("treeCPU grew by %v while the process burned %v", got, cpuBurned)
			}
		})
	}
}

func TestProcTicks_ReadsTheParent(t *testing.T) {
	got, err := procTicks(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if got.ppid != os.Getppid() {
		t.Errorf("procTicks says the parent is %d, want %d", got.ppid, os.Getppid())
	}
}
