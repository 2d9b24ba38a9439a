//go:build aix || solaris

package jobstore

import (
	"errors"
	"os"
	"path/filepath"
)

// linkAt: golang.org/x/sys/unix has no linkat for AIX and Solaris/illumos,
// so the link is made by path here: the one step of the protocol that names
// the directory again instead of using its descriptor.
func linkAt(d dirHandle, tmp, name string) error {
	err := os.Link(filepath.Join(d.path, tmp), filepath.Join(d.path, name))
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}
