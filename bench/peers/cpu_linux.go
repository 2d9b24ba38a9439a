package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// clockTick is the unit of /proc/PID/stat's times (USER_HZ, 100 on every
// Linux architecture Go runs on).
const clockTick = 10 * time.Millisecond

// selfCPU is this process's user and system CPU time (getrusage).
func selfCPU() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, err
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}

func treeCPU(pidFile string, tree bool) (time.Duration, error) {
	b, err := os.ReadFile(pidFile)
	if err != nil {
		return 0, err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		return 0, fmt.Errorf("%s: no pid on its first line", pidFile)
	}
	if !tree {
		_, ticks, err := procTicks(pid, true)
		return time.Duration(ticks) * clockTick, err
	}
	// A child reaped while its siblings are read would be counted in
	// neither place: read the parent before and after, and again until it
	// has not changed.
	for range consistentReads {
		_, before, err := procTicks(pid, true)
		if err != nil {
			return 0, err
		}
		children, err := childTicks(pid)
		if err != nil {
			return 0, err
		}
		_, after, err := procTicks(pid, true)
		if err != nil {
			return 0, err
		}
		if after == before {
			return time.Duration(after+children) * clockTick, nil
		}
	}
	return 0, fmt.Errorf("pid %d: its children kept exiting through %d reads", pid, consistentReads)
}

// consistentReads bounds treeCPU's tries at a reading no child's exit
// went through.
const consistentReads = 20

// childTicks is the utime+stime of the live children of pid.
func childTicks(pid int) (int64, error) {
	dirs, err := filepath.Glob("/proc/[0-9]*")
	if err != nil {
		return 0, err
	}
	var ticks int64
	for _, d := range dirs {
		child, err := strconv.Atoi(filepath.Base(d))
		if err != nil || child == pid {
			continue
		}
		parent, t, err := procTicks(child, false)
		if err != nil || parent != pid {
			continue // gone, or not the server's
		}
		ticks += t
	}
	return ticks, nil
}

// procTicks reads a process's parent and its utime+stime, with its waited
// children's cutime+cstime when withChildren is set (proc(5)).
func procTicks(pid int, withChildren bool) (ppid int, ticks int64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, err
	}
	// The command name, field 2, is in parentheses and may hold spaces.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	sc := bufio.NewScanner(bytes.NewReader(b[i+1:]))
	sc.Split(bufio.ScanWords)
	var f []string // fields from 3 (state) on
	for sc.Scan() {
		f = append(f, sc.Text())
	}
	if len(f) < 15 {
		return 0, 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f)+2)
	}
	num := func(field int) int64 { // field as proc(5) numbers it
		v, _ := strconv.ParseInt(f[field-3], 10, 64)
		return v
	}
	ticks = num(14) + num(15)
	if withChildren {
		ticks += num(16) + num(17)
	}
	return int(num(4)), ticks, nil
}
