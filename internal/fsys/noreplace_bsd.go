//go:build freebsd || netbsd || openbsd || dragonfly

package fsys

import "golang.org/x/sys/unix"

// The BSDs have no no-replace rename: a file is published by link(2), which
// fails with EEXIST on a taken name just the same, and a directory renamed
// with rename(2), which replaces only an empty one.

func renameNoReplace(int, string, string) (moved bool, err error) { return false, nil }

// linkAt gives the file tmp in d the second name name (link(2)), failing
// with EEXIST if name is taken.
func linkAt(d *Dir, tmp, name string) error { return unix.Linkat(d.fd, tmp, d.fd, name, 0) }
