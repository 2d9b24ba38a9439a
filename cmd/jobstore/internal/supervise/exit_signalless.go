//go:build !unix

package supervise

import (
	"fmt"
	"os"
)

// exitOf is how a command that ran ended where there are no signals: its
// exit code, no signal (on Windows a process ended by kill exits with 1),
// and a description.
func exitOf(ps *os.ProcessState) (code int, signal, how string) {
	code = ps.ExitCode()
	return code, "", fmt.Sprintf("exited with status %d", code)
}

// IsStopCode reports whether an exit code is a death by a stop signal:
// never where there are no signals.
func IsStopCode(int) bool { return false }
