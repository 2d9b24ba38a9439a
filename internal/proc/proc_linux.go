package proc

import (
	"errors"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"sync"
)

// scope is the kernel's boot (boot_id changes at every boot, so a pid from
// before a reboot never matches) and the pid namespace (containers that
// share a hostname do not share pids). "" when either cannot be read.
var scope = sync.OnceValue(func() string {
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

// probe reads /proc/<pid>/stat: no such file is a dead process; state Z
// (zombie) or X (dead) is dead; otherwise the start token is field 22,
// starttime, in clock ticks since boot, which with scope's boot_id names one
// process for the life of the machine.
func probe(pid int) (State, string) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if errors.Is(err, fs.ErrNotExist) {
		return Dead, ""
	}
	if err != nil {
		return Unknown, ""
	}
	return parseProcStat(string(b))
}

// parseProcStat reads state (field 3) and starttime (field 22) of a
// /proc/<pid>/stat line. comm (field 2) is in parentheses and may itself hold
// spaces and ')', so fields are counted after the last ')'.
func parseProcStat(s string) (State, string) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return Unknown, ""
	}
	f := strings.Fields(s[i+1:]) // f[0] is field 3
	if len(f) < 20 {
		return Unknown, ""
	}
	if f[0] == "Z" || f[0] == "X" || f[0] == "x" {
		return Dead, ""
	}
	if _, err := strconv.ParseUint(f[19], 10, 64); err != nil {
		return Unknown, ""
	}
	return Alive, f[19]
}
