package jobstore

import (
	"errors"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"sync"
)

// pidScope is where this process's pids name processes: the kernel's boot
// (boot_id changes at every boot, so a pid from before a reboot never
// matches) and the pid namespace (containers that share a hostname do not
// share pids). "" when either cannot be read.
var pidScope = sync.OnceValue(func() string {
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	ns, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return ""
	}
	return "linux/" + strings.TrimSpace(string(boot)) + "/" + ns
})

// probeProcess reads /proc/<pid>/stat: no such file is a dead process; state
// Z (zombie) or X (dead) is dead; otherwise the start token is field 22,
// starttime, in clock ticks since boot, which with pidScope's boot_id names
// one process for the life of the machine.
func probeProcess(pid int) (procState, string) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if errors.Is(err, fs.ErrNotExist) {
		return procDead, ""
	}
	if err != nil {
		return procUnknown, ""
	}
	return parseProcStat(string(b))
}

// parseProcStat reads state (field 3) and starttime (field 22) of a
// /proc/<pid>/stat line. comm (field 2) is in parentheses and may itself hold
// spaces and ')', so fields are counted after the last ')'.
func parseProcStat(s string) (procState, string) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return procUnknown, ""
	}
	f := strings.Fields(s[i+1:]) // f[0] is field 3
	if len(f) < 20 {
		return procUnknown, ""
	}
	if f[0] == "Z" || f[0] == "X" || f[0] == "x" {
		return procDead, ""
	}
	if _, err := strconv.ParseUint(f[19], 10, 64); err != nil {
		return procUnknown, ""
	}
	return procAlive, f[19]
}
