//go:build freebsd || netbsd || openbsd || dragonfly

package proc

import (
	"errors"
	"sync"

	"golang.org/x/sys/unix"
)

// scope is this boot of this kernel (kern.boottime). golang.org/x/sys
// offers no kinfo_proc here, so a process's start time is unknown.
var scope = sync.OnceValue(func() string { return bootScope("bsd/") })

// probe can prove death (ESRCH) but not life: without a start time a live
// pid may belong to another process, so it is Unknown and the caller's
// other evidence (a lease) decides.
func probe(pid int) (State, string) {
	if err := unix.Kill(pid, 0); errors.Is(err, unix.ESRCH) {
		return Dead, ""
	}
	return Unknown, ""
}
