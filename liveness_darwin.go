package jobstore

import (
	"errors"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// pidScope is this boot of this kernel (kern.boottime, to the microsecond).
var pidScope = sync.OnceValue(func() string { return bootScope("darwin/") })

// szomb is p_stat of a zombie (sys/proc.h).
const szomb = 5

// probeProcess asks kern.proc.pid.<pid> for the process's start time
// (p_starttime); kill(pid, 0) tells a missing pid (ESRCH) from one that
// sysctl will not describe.
func probeProcess(pid int) (procState, string) {
	if err := unix.Kill(pid, 0); errors.Is(err, unix.ESRCH) {
		return procDead, ""
	}
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil {
		return procUnknown, ""
	}
	if kp.Proc.P_stat == szomb {
		return procDead, ""
	}
	t := kp.Proc.P_starttime
	return procAlive, strconv.FormatInt(int64(t.Sec), 10) + "." + strconv.FormatInt(int64(t.Usec), 10)
}
