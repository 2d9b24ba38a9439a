//go:build unix

package main

import "golang.org/x/sys/unix"

// mkfifo makes a FIFO (named pipe) at path.
func mkfifo(path string) error { return unix.Mkfifo(path, 0o644) }
