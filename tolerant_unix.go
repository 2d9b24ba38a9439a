//go:build unix

package jobstore

import (
	"errors"
	"syscall"
)

// isTransientReadError: NFS reports ESTALE when a file was replaced under a
// cached handle; reopening finds the new file.
func isTransientReadError(err error) bool {
	return errors.Is(err, syscall.ESTALE)
}
