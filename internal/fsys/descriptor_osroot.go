//go:build unix && !linux

package fsys

import "golang.org/x/sys/unix"

// heldPath reports no path for d's descriptor: outside Linux no path
// resolves to an open directory itself (/dev/fd/N is not a directory one
// can create in), so CreateTemp checks an os.Root instead.
func (d *Dir) heldPath() (path string, ok bool) { return "", false }

// lookupFlag opens a directory for OpenLookup: read-only, as Open does.
const lookupFlag = unix.O_RDONLY
