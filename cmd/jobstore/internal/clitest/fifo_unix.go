//go:build unix

package clitest

import "golang.org/x/sys/unix"

// Mkfifo makes a FIFO (named pipe) at path.
func Mkfifo(path string) error { return unix.Mkfifo(path, 0o644) }
