package main

import (
	"os"
	"syscall"
)

// hangup stands in for SIGHUP, which js/wasm does not define: no
// supervisor runs there to report it, and a stop ends as SIGTERM ends one.
func hangup() os.Signal { return syscall.SIGTERM }
