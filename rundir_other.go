//go:build !unix

package jobstore

import (
	"errors"
	"io/fs"
)

// heldDir holds nothing here: on Windows each of a Run's writes looks its
// attempt directory up by name (dirHandle.createTemp with sub), and
// elsewhere nothing is written at all.
type heldDir struct{}

func holdDir(JobDir, string) (*heldDir, error) { return nil, nil }

// The methods are never called: holdDir returns no heldDir.

func (*heldDir) createTemp(string, string, fs.FileMode) (tempFile, string, error) {
	return nil, "", errors.ErrUnsupported
}
func (*heldDir) remove(string) error            { return errors.ErrUnsupported }
func (*heldDir) writeOnce(string, []byte) error { return errors.ErrUnsupported }
func (*heldDir) close() error                   { return nil }
