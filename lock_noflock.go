//go:build aix || solaris

package jobstore

import (
	"errors"
	"os"
)

// No flock here (fcntl locks belong to the process, so two LockJob calls in
// one process would not conflict): job locking is not supported.
var errNoLocking = errors.New("job locking is not supported on this platform")

func lockFile(*os.File) error   { return errNoLocking }
func unlockFile(*os.File) error { return nil }
func isLockHeld(error) bool     { return false }
