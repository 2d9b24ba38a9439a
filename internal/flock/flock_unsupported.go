//go:build aix || hurd || solaris

package flock

import (
	"errors"
	"fmt"
	"os"
	"runtime"
)

// errNoFlock is every lock's answer here: no flock. On aix and solaris, Go's filelock falls back to fcntl
// locks, which belong to the process and the file, not to the open file
// description: a second open in the same process would not conflict, and
// closing any descriptor of the file would drop the lock. Go works around
// that with per-process bookkeeping; here a lock that cannot exclude its own
// process is refused instead. illumos, whose GOOS implies solaris, has
// flock, and Go's filelock uses it there; until this package is tested on
// illumos, it refuses there too. golang.org/x/sys has no flock for hurd.
var errNoFlock = fmt.Errorf("no flock(2) on %s: %w", runtime.GOOS, errors.ErrUnsupported)

func lock(*os.File) error   { return errNoFlock }
func unlock(*os.File) error { return errNoFlock }
func isHeld(error) bool     { return false }
