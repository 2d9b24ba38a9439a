//go:build !unix && !windows

package flock

import (
	"errors"
	"os"
)

// lock, unlock and isHeld: neither Unix nor Windows, so no file locks.
func lock(*os.File) error   { return errors.ErrUnsupported }
func unlock(*os.File) error { return errors.ErrUnsupported }
func isHeld(error) bool     { return false }
