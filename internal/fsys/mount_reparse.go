//go:build !unix

package fsys

// crossesDevice is false outside Unix: on Windows a mounted folder is a
// reparse point, which RemoveAll removes as a name without opening it.
func crossesDevice(*Dir, *Dir) (bool, error) { return false, nil }
