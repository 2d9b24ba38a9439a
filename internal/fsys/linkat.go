//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package fsys

import "golang.org/x/sys/unix"

// linkAt gives the file tmp in d the second name name (link(2)), failing
// with EEXIST if name is taken. (AIX and Solaris have their own, by path:
// noreplace_pathlink.go.)
func linkAt(d *Dir, tmp, name string) error { return unix.Linkat(d.fd, tmp, d.fd, name, 0) }
