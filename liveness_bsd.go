//go:build freebsd || netbsd || openbsd || dragonfly

package jobstore

import (
	"errors"
	"sync"

	"golang.org/x/sys/unix"
)

// pidScope is this boot of this kernel (kern.boottime). golang.org/x/sys
// offers no kinfo_proc here, so a process's start time is unknown.
var pidScope = sync.OnceValue(func() string { return bootScope("bsd/") })

// probeProcess can prove death (ESRCH) but not life: without a start time a
// live pid may belong to another process, so it is procUnknown and the
// lease decides.
func probeProcess(pid int) (procState, string) {
	if err := unix.Kill(pid, 0); errors.Is(err, unix.ESRCH) {
		return procDead, ""
	}
	return procUnknown, ""
}
