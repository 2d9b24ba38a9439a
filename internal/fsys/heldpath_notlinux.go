//go:build unix && !linux

package fsys

// heldPath reports no path for d's descriptor: outside Linux no path
// resolves to an open directory itself (/dev/fd/N is not a directory one
// can create in), so CreateTemp checks an os.Root instead.
func (d *Dir) heldPath() (path string, ok bool) { return "", false }
