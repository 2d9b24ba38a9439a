//go:build freebsd || netbsd || openbsd || dragonfly

package jobstore

import (
	"errors"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// pidScope is this boot of this kernel (kern.boottime). golang.org/x/sys
// offers no kinfo_proc here, so a process's start time is unknown.
var pidScope = sync.OnceValue(func() string {
	tv, err := unix.SysctlTimeval("kern.boottime")
	if err != nil {
		return ""
	}
	return "bsd/" + strconv.FormatInt(int64(tv.Sec), 10) + "." + strconv.FormatInt(int64(tv.Usec), 10)
})

// probeProcess can prove death (ESRCH) but not life: without a start time a
// live pid may belong to another process, so it is procUnknown and the
// lease decides.
func probeProcess(pid int) (procState, string) {
	if err := unix.Kill(pid, 0); errors.Is(err, unix.ESRCH) {
		return procDead, ""
	}
	return procUnknown, ""
}
