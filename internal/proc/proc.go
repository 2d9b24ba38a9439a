// Package proc tells, from a process ID, whether that process is still
// alive, on the operating systems where a pid can be tied to one process.
//
// A pid alone is not enough: pids are reused, and a pid from another boot or
// another pid namespace names another process. So a process is recorded as
// three values: its pid scope (Scope), its pid, and its start token
// (SelfStart, Probe), and Judge compares them with what this host sees now.
package proc

import (
	"os"
	"sync"
)

// State is what this host can tell about a process from its pid.
type State int

const (
	// Unknown: nothing can be concluded (no pid scope here, a pid that
	// exists but whose start time cannot be read, a permission error).
	Unknown State = iota
	// Alive: the pid exists, runs (not a zombie) and started when the
	// owner record says, so it is the same process.
	Alive
	// Dead: no such process, a zombie, or the pid was reused by a
	// process that started at another time.
	Dead
)

func (s State) String() string {
	switch s {
	case Alive:
		return "alive"
	case Dead:
		return "dead"
	}
	return "unknown"
}

// Scope is where this process's pids name processes: two processes that
// report the same scope mean the same process by the same pid. It is ""
// where there is no such scope, and then no pid is ever judged. The value is
// read once and stays the same for the life of this process.
func Scope() string { return scope() }

// SelfStart is this process's own start token (see Probe), read once: it
// names this process for as long as it lives. It is "" where Probe cannot
// read start tokens.
func SelfStart() string { return selfStart() }

var selfStart = sync.OnceValue(func() string {
	_, start := Probe(os.Getpid())
	return start
})

// Probe looks at the process pid on this host now. When it is Alive, start
// is its start token: a string that, within one Scope, no other process
// with the same pid has had; "" when the start cannot be read. Otherwise
// start is "".
func Probe(pid int) (st State, start string) { return probe(pid) }

// Judge says whether the process an owner record names is alive, as seen
// from this process: only when both name the same pid scope (the same boot
// of the same kernel and pid namespace, see Scope) does the pid mean the
// same process here. start is the owner's recorded start token; an empty
// one (unreadable when the claim was made) can prove death but never life,
// since the pid may have been reused.
func Judge(scope string, pid int, start string) State {
	if scope == "" || scope != Scope() || pid <= 0 {
		return Unknown
	}
	st, now := Probe(pid)
	switch {
	case st != Alive:
		return st
	case start == "" || now == "":
		return Unknown // alive, but maybe another process under a reused pid
	case now != start:
		return Dead // the pid was reused
	}
	return Alive
}
