package proc

import (
	"os"
	"strconv"
	"testing"
)

func TestParseProcStat(t *testing.T) {
	tail := " 1 1 1 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 1 0 987654 1000 100"
	for _, tc := range []struct {
		name, line string
		state      State
		start      string
	}{
		{"plain", "42 (sleep) S" + tail, Alive, "987654"},
		{"comm with ') ('", "42 (a) (b c) R" + tail, Alive, "987654"},
		{"zombie", "42 (sleep) Z" + tail, Dead, ""},
		{"dead", "42 (sleep) X" + tail, Dead, ""},
		{"short", "42 (sleep) S 1 2", Unknown, ""},
		{"no comm", "garbage", Unknown, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, start := parseProcStat(tc.line)
			if st != tc.state || start != tc.start {
				t.Fatalf("got %v %q, want %v %q", st, start, tc.state, tc.start)
			}
		})
	}
}

func TestJudge_SameHost(t *testing.T) {
	scope := Scope()
	if scope == "" {
		t.Fatal("no pid scope on Linux: /proc/sys/kernel/random/boot_id or /proc/self/ns/pid unreadable")
	}
	st, self := Probe(os.Getpid())
	if st != Alive || self == "" {
		t.Fatalf("this process: %v %q", st, self)
	}

	child, _ := startChild(t, 0)
	_, childStart := Probe(child.Process.Pid)

	for _, tc := range []struct {
		name  string
		scope string
		pid   int
		start string
		want  State
	}{
		{"this process", scope, os.Getpid(), self, Alive},
		{"a live child", scope, child.Process.Pid, childStart, Alive},
		{"pid reused: another start time", scope, os.Getpid(), self + "1", Dead},
		{"alive, start unknown: may be a reused pid", scope, os.Getpid(), "", Unknown},
		{"another boot or pid namespace", scope + "x", os.Getpid(), self, Unknown},
		{"no scope recorded", "", os.Getpid(), self, Unknown},
		{"no such pid", scope, 1 << 30, "1", Dead},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Judge(tc.scope, tc.pid, tc.start); got != tc.want {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}

	// Killed but not reaped: a zombie is dead. Then reaped: no such pid.
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	pid := child.Process.Pid
	for range 1000 {
		if st, _ := Probe(pid); st == Dead {
			break
		}
		_, _ = os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	}
	if got := Judge(scope, pid, childStart); got != Dead {
		t.Fatalf("killed child (zombie): %v", got)
	}
	_ = child.Wait()
	if got := Judge(scope, pid, childStart); got != Dead {
		t.Fatalf("reaped child: %v", got)
	}
}
