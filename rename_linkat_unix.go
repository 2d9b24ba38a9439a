//go:build unix && !linux && !aix && !solaris

package jobstore

import "golang.org/x/sys/unix"

// linkAt gives the file tmp in d the second name name (link(2)), failing
// with EEXIST if name is taken.
func linkAt(d dirHandle, tmp, name string) error { return unix.Linkat(d.fd, tmp, d.fd, name, 0) }
