package proc

import (
	"errors"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// scope is this boot of this kernel (kern.boottime, to the microsecond).
var scope = sync.OnceValue(func() string { return bootScope("darwin/") })

// szomb is p_stat of a zombie (sys/proc.h).
const szomb = 5

// probe asks kern.proc.pid.<pid> for the process's start time
// (p_starttime); kill(pid, 0) tells a missing pid (ESRCH) from one that
// sysctl will not describe.
func probe(pid int) (State, string) {
	if err := unix.Kill(pid, 0); errors.Is(err, unix.ESRCH) {
		return Dead, ""
	}
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil {
		return Unknown, ""
	}
	if kp.Proc.P_stat == szomb {
		return Dead, ""
	}
	t := kp.Proc.P_starttime
	return Alive, strconv.FormatInt(int64(t.Sec), 10) + "." + strconv.FormatInt(int64(t.Usec), 10)
}
