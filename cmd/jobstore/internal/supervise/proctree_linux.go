package supervise

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// procInfo is a process as /proc/PID/stat describes it.
type procInfo struct {
	pid, ppid int
	start     uint64 // start time in clock ticks since boot: with pid, names one process
	zombie    bool   // dead, not yet reaped
	stopped   bool   // stopped by a signal (SIGSTOP) or traced
}

// readProc reads /proc/PID/stat; ok is false when pid is gone (or the
// file cannot be read).
func readProc(pid int) (p procInfo, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return p, false
	}
	// "PID (COMM) STATE PPID ... STARTTIME ...": COMM may hold anything,
	// so the fields are counted from its closing parenthesis, the last one.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return p, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 20 {
		return p, false
	}
	ppid, err1 := strconv.Atoi(string(f[1]))
	start, err2 := strconv.ParseUint(string(f[19]), 10, 64)
	if err1 != nil || err2 != nil {
		return p, false
	}
	state := f[0][0]
	return procInfo{pid: pid, ppid: ppid, start: start, zombie: state == 'Z' || state == 'X', stopped: state == 'T' || state == 't'}, true
}

// descendants lists the live processes below pid (its children, theirs,
// and so on; zombies left out), from one scan of /proc. A process started
// during the scan may be missed: callers scan again until nothing is left.
func descendants(pid int) []procInfo {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := make(map[int][]procInfo)
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, ok := readProc(n); ok {
			children[p.ppid] = append(children[p.ppid], p)
		}
	}
	var out []procInfo
	queue := []int{pid}
	for len(queue) > 0 {
		next := queue[0]
		queue = queue[1:]
		for _, c := range children[next] {
			queue = append(queue, c.pid)
			if !c.zombie {
				out = append(out, c)
			}
		}
	}
	return out
}

// signalProc sends sig to p, the process a scan found, and to no other: a
// child of self stays its own until reaped, so its pid names it; a deeper
// descendant may have died and its pid been given to another process since
// the scan, so it is opened (pidfd) and found to be the same process (the
// same start time) before the signal goes through that handle. Without
// pidfd_open (Linux before 5.3, or refused by a seccomp filter) the check
// and the signal are two steps.
func signalProc(self int, p procInfo, sig unix.Signal) {
	if p.ppid == self {
		_ = unix.Kill(p.pid, sig)
		return
	}
	fd, err := unix.PidfdOpen(p.pid, 0)
	if err != nil {
		// ESRCH: gone. ENOSYS (before Linux 5.3) or EPERM (a seccomp
		// filter that does not know it): check, then signal.
		if !errors.Is(err, unix.ESRCH) && sameProc(p) {
			_ = unix.Kill(p.pid, sig)
		}
		return
	}
	defer unix.Close(fd)
	if sameProc(p) {
		_ = unix.PidfdSendSignal(fd, sig, nil, 0)
	}
}

// sameProc reports whether p's pid still names the process p describes.
func sameProc(p procInfo) bool {
	now, ok := readProc(p.pid)
	return ok && now.start == p.start
}

// marked lists the live processes whose environment holds the line mark
// ("NAME=VALUE"), from one scan of /proc: those that inherited it, whatever
// their parent and session. One that changed its environment (execve with
// another, or overwrote its memory) is not found; nor is one this user
// may not read.
func marked(mark string) []procInfo {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	want := []byte(mark)
	var out []procInfo
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil {
			continue
		}
		for v := range bytes.SplitSeq(env, []byte{0}) {
			if bytes.Equal(v, want) {
				if p, ok := readProc(n); ok && !p.zombie {
					out = append(out, p)
				}
				break
			}
		}
	}
	return out
}

// killMarked kills the processes marked with mark (marked) until a scan
// finds none, or limit passes; it returns how many the last scan found.
func killMarked(mark string, limit time.Duration) int {
	deadline := time.Now().Add(limit)
	for {
		left := marked(mark)
		if len(left) == 0 || time.Now().After(deadline) {
			return len(left)
		}
		for _, p := range left {
			signalProc(-1, p, unix.SIGKILL)
		}
		time.Sleep(superviseKillRetry)
	}
}

// Descendants lists the pids of the live processes below pid, from one
// scan of /proc (see descendants).
func Descendants(pid int) []int {
	var out []int
	for _, p := range descendants(pid) {
		out = append(out, p.pid)
	}
	return out
}

// Children lists the pids of the live children of pid, from one scan of
// /proc.
func Children(pid int) []int {
	var out []int
	for _, p := range descendants(pid) {
		if p.ppid == pid {
			out = append(out, p.pid)
		}
	}
	return out
}

// Ended reports whether pid names no live process: none, or a zombie.
func Ended(pid int) bool {
	p, ok := readProc(pid)
	return !ok || p.zombie
}
