//go:build !js

package main

import (
	"os"
	"syscall"
)

// hangup is SIGHUP, a stop signal a supervisor may report.
func hangup() os.Signal { return syscall.SIGHUP }
