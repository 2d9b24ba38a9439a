//go:build !unix && !windows

package flock

import (
	"errors"
	"os"
)

// Neither Unix nor Windows: no file locks.
func lock(*os.File) error   { return errors.ErrUnsupported }
func unlock(*os.File) error { return errors.ErrUnsupported }
func isHeld(error) bool     { return false }
