//go:build unix && !linux

package main

import "syscall"

// dieWithWorker does nothing off Linux: the command of a worker that dies
// runs on until it ends, and its job is marked lost meanwhile.
func dieWithWorker(*syscall.SysProcAttr) {}
