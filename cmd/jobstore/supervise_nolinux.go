//go:build !linux

package main

import (
	"fmt"
	"io"
)

// superviseArg names the supervisor mode, on Linux only (see
// supervise_linux.go); elsewhere it is an unknown command.
const superviseArg = "__supervise"

func supervise(args []string, stderr io.Writer) int {
	fmt.Fprintf(stderr, "jobstore: unknown command %q\n", superviseArg)
	return exitUsage
}
