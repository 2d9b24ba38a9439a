//go:build !unix

package clitest

import "errors"

// Mkfifo: this platform's file systems have no FIFOs.
func Mkfifo(string) error { return errors.ErrUnsupported }
