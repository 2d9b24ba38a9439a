//go:build freebsd || netbsd || openbsd || dragonfly

package fsys

// The BSDs have no no-replace rename: a file is published by link(2), which
// fails with EEXIST on a taken name just the same, and a directory renamed
// with rename(2), which replaces only an empty one.

func renameNoReplace(int, string, int, string) (moved bool, err error) { return false, nil }
