//go:build !plan9

package main

import "syscall"

// errDiskFull is the OS's "no space left" error, which isDiskFull knows.
var errDiskFull error = syscall.ENOSPC
