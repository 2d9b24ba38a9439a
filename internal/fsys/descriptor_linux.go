//go:build linux

package fsys

import (
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// heldPath is a path that names the very directory d's descriptor holds,
// whatever has become of d.path since it was opened: /proc/self/fd/N, a
// link that the kernel resolves to the open directory itself, never by a
// name, so neither a rename of the directory nor a link put at its path can
// redirect it. ok is false where /proc/self/fd is not procfs (no /proc in a
// chroot or a sandbox); CreateTemp then checks an os.Root instead.
func (d *Dir) heldPath() (path string, ok bool) {
	if !procFDs() {
		return "", false
	}
	return "/proc/self/fd/" + strconv.Itoa(d.fd), true
}

// procFDs reports whether /proc/self/fd is procfs, looked up once per
// process: anything else mounted there would not resolve a descriptor.
var procFDs = sync.OnceValue(func() bool {
	var s unix.Statfs_t
	return unix.Statfs("/proc/self/fd", &s) == nil && s.Type == unix.PROC_SUPER_MAGIC
})

// lookupFlag opens a directory for OpenLookup: O_PATH, a descriptor for
// lookups alone, which the kernel sets up for less than one it can read.
const lookupFlag = unix.O_PATH
