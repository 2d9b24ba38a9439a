//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package proc

import (
	"strconv"

	"golang.org/x/sys/unix"
)

// bootScope names this boot of this kernel by kern.boottime, to the
// microsecond, after prefix; "" when it cannot be read. It is the pid scope
// of darwin and the BSDs, which have no pid namespaces.
func bootScope(prefix string) string {
	tv, err := unix.SysctlTimeval("kern.boottime")
	if err != nil {
		return ""
	}
	return prefix + strconv.FormatInt(int64(tv.Sec), 10) + "." + strconv.FormatInt(int64(tv.Usec), 10)
}
