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

func TestParseMachineCPU(t *testing.T) {
	tests := []struct {
		name      string
		stat      string
		busy, all time.Duration
		fails     bool
	}{
		{name: "ten fields", stat: "cpu  100 2 30 500 40 5 6 7 8 9\ncpu0 1 2 3 4 5 6 7 8 9 10\n",
			busy: (100 + 2 + 30 + 5 + 6 + 7) * clockTick, all: (100 + 2 + 30 + 500 + 40 + 5 + 6 + 7) * clockTick},
		{name: "eight numbers, as an old kernel", stat: "cpu 1 0 1 10 0 0 0 1\n", busy: 3 * clockTick, all: 13 * clockTick},
		{name: "not the sum first", stat: "cpu0 1 2 3 4 5 6 7 8\n", fails: true},
		{name: "too few fields", stat: "cpu 1 2 3 4 5 6 7\n", fails: true},
		{name: "not a number", stat: "cpu 1 2 x 4 5 6 7 8\n", fails: true},
		{name: "empty", stat: "", fails: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			busy, all, err := parseMachineCPU([]byte(tt.stat))
			if tt.fails {
				if err == nil {
					t.Fatalf("parseMachineCPU(%q) = %v, %v, want an error", tt.stat, busy, all)
				}
				return
			}
			if err != nil || busy != tt.busy || all != tt.all {
				t.Errorf("parseMachineCPU(%q) = %v, %v, %v; want %v, %v", tt.stat, busy, all, err, tt.busy, tt.all)
			}
		})
	}
}

func TestMachineCPU_CountsThisProcessesWork(t *testing.T) {
	busy0, all0, err := machineCPU()
	if err != nil {
		t.Fatal(err)
	}
	burn(t, cpuBurned)
	busy1, all1, err := machineCPU()
	if err != nil {
		t.Fatal(err)
	}
	if got := busy1 - busy0; got < cpuBurned-3*clockTick {
		t.Errorf("the machine's busy time grew by %v while this process burned %v", got, cpuBurned)
	}
	if all1-all0 < busy1-busy0 {
		t.Errorf("the machine's time grew by %v, less than its busy time (%v)", all1-all0, busy1-busy0)
	}
}
