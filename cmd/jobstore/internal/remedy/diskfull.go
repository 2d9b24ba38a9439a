//go:build !plan9

package remedy

import (
	"errors"
	"syscall"
)

// isDiskFull reports whether err is the filesystem saying it has no room.
func isDiskFull(err error) bool { return errors.Is(err, syscall.ENOSPC) }
