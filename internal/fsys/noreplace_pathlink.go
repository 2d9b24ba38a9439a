//go:build aix || solaris

package fsys

import (
	"errors"
	"os"
)

// AIX and Solaris/illumos have no no-replace rename, and golang.org/x/sys/unix
// has no linkat for them: a file is published by os.Link, by path, the one
// step of the protocol that names the directory again instead of using its
// descriptor; a directory is renamed with rename(2), which replaces only an
// empty one.

func renameNoReplace(int, string, int, string) (moved bool, err error) { return false, nil }

// linkAt gives the file tmp in d the second name name, failing with EEXIST
// if name is taken.
func linkAt(d *Dir, tmp, name string) error {
	err := os.Link(d.Join(tmp), d.Join(name))
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}
