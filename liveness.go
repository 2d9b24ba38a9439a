package jobstore

import (
	"os"
	"sync"
)

// procState is what this host can tell about a process from its pid.
type procState int

const (
	// procUnknown: nothing can be concluded (no pid scope here, a pid that
	// exists but whose start time cannot be read, a permission error).
	procUnknown procState = iota
	// procAlive: the pid exists, runs (not a zombie) and started when the
	// owner record says, so it is the same process.
	procAlive
	// procDead: no such process, a zombie, or the pid was reused by a
	// process that started at another time.
	procDead
)

func (s procState) String() string {
	switch s {
	case procAlive:
		return "alive"
	case procDead:
		return "dead"
	}
	return "unknown"
}

// selfStart is this process's own start token (see probeProcess), read
// once: it names this process for as long as it lives.
var selfStart = sync.OnceValue(func() string {
	_, start := probeProcess(os.Getpid())
	return start
})

// judgeProcess says whether the process an owner record names is alive,
// as seen from this process: only when both name the same pid scope (the
// same boot of the same kernel and pid namespace, see pidScope) does the
// pid mean the same process here. start is the owner's recorded start
// token; an empty one (unreadable when the claim was made) can prove death
// but never life, since the pid may have been reused.
func judgeProcess(scope string, pid int, start string) procState {
	if scope == "" || scope != pidScope() || pid <= 0 {
		return procUnknown
	}
	st, now := probeProcess(pid)
	switch {
	case st != procAlive:
		return st
	case start == "" || now == "":
		return procUnknown // alive, but maybe another process under a reused pid
	case now != start:
		return procDead // the pid was reused
	}
	return procAlive
}
