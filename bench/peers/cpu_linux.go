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

// machineCPU is the time all of this machine's CPUs spent busy (user,
// nice, system, irq, softirq and steal: every process and the kernel's own
// threads, such as a file system's journal) and in all since boot, from
// the first line of /proc/stat (proc(5)). Guest time is counted in user
// time already.
func machineCPU() (busy, all time.Duration, err error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, err
	}
	return parseMachineCPU(b)
}

// parseMachineCPU is machineCPU of a /proc/stat's content.
func parseMachineCPU(b []byte) (busy, all time.Duration, err error) {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := strings.Fields(string(line))
	if len(f) < 9 || f[0] != "cpu" {
		return 0, 0, fmt.Errorf("/proc/stat: the first line is not the CPUs' sum: %q", line)
	}
	var t [8]int64 // user nice system idle iowait irq softirq steal
	for i := range t {
		if t[i], err = strconv.ParseInt(f[i+1], 10, 64); err != nil {
			return 0, 0, fmt.Errorf("/proc/stat: field %d: %w", i+2, err)
		}
	}
	b8 := t[0] + t[1] + t[2] + t[5] + t[6] + t[7]
	return time.Duration(b8) * clockTick, time.Duration(b8+t[3]+t[4]) * clockTick, nil
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
		t, err := procTicks(pid)
		return time.Duration(t.own+t.reaped) * clockTick, err
	}
	// A child reaped while its siblings are read would be counted in
	// neither place: read the parent's reaped children before and after,
	// and again until they have not changed.
	for range consistentReads {
		before, err := procTicks(pid)
		if err != nil {
			return 0, err
		}
		children, err := childTicks(pid)
		if err != nil {
			return 0, err
		}
		after, err := procTicks(pid)
		if err != nil {
			return 0, err
		}
		if after.reaped == before.reaped {
			return time.Duration(after.own+after.reaped+children) * clockTick, nil
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
	var sum int64
	for _, d := range dirs {
		child, err := strconv.Atoi(filepath.Base(d))
		if err != nil || child == pid {
			continue
		}
		t, err := procTicks(child)
		if err != nil || t.ppid != pid {
			continue // gone, or not the server's
		}
		sum += t.own
	}
	return sum, nil
}

// ticks is what /proc/PID/stat says of a process's CPU time (proc(5)).
type ticks struct {
	ppid   int
	own    int64 // utime + stime
	reaped int64 // cutime + cstime: its children that exited and were waited for
}

func procTicks(pid int) (ticks, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ticks{}, err
	}
	// The command name, field 2, is in parentheses and may hold spaces.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return ticks{}, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	sc := bufio.NewScanner(bytes.NewReader(b[i+1:]))
	sc.Split(bufio.ScanWords)
	var f []string // fields from 3 (state) on
	for sc.Scan() {
		f = append(f, sc.Text())
	}
	if len(f) < 15 {
		return ticks{}, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f)+2)
	}
	num := func(field int) int64 { // field as proc(5) numbers it
		v, _ := strconv.ParseInt(f[field-3], 10, 64)
		return v
	}
	return ticks{ppid: int(num(4)), own: num(14) + num(15), reaped: num(16) + num(17)}, nil
}
