//go:build !linux

package supervise

import (
	"fmt"
	"io"
)

// Arg names the supervisor mode, on Linux only (see
// supervisor_linux.go); elsewhere it is an unknown command.
const Arg = "__supervise"

// Exit codes of Main, as the jobstore command's own.
const (
	exitOK    = 0
	exitUsage = 2
)

// Main says that the supervisor mode is Linux's alone, and returns exit
// code 2.
func Main(args []string, stderr io.Writer) int {
	fmt.Fprintf(stderr, "jobstore: unknown command %q\n", Arg)
	return exitUsage
}
