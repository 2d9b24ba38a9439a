//go:build unix

package supervise

import (
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"
)

// StopName and KillName are how the stop and the kill after the grace are
// named in messages.
const (
	StopName = "SIGTERM"
	KillName = "SIGKILL"
)

// exitOfStatus is how a command that ran ended, from its wait status: its
// exit code as recorded in status.json, the signal that killed it ("" if
// none) and a description. A command killed by a signal is recorded as the
// shell does it, 128 + the signal's number.
func exitOfStatus(ws syscall.WaitStatus) (code int, signal, how string) {
	if ws.Signaled() {
		sig := ws.Signal()
		name := unix.SignalName(sig)
		return 128 + int(sig), name, fmt.Sprintf("was killed by signal %s (%d)", name, int(sig))
	}
	code = ws.ExitStatus()
	return code, "", fmt.Sprintf("exited with status %d", code)
}

// IsStopCode reports whether an exit code, as exitOfStatus records it,
// is a death by a stop signal (SIGTERM, SIGINT, SIGHUP): the command's
// own, or that of a shell whose foreground command died of one.
func IsStopCode(code int) bool {
	switch code - 128 {
	case int(unix.SIGTERM), int(unix.SIGINT), int(unix.SIGHUP):
		return true
	}
	return false
}
