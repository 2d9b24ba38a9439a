//go:build !unix

package main

import "errors"

// mkfifo: this platform's file systems have no FIFOs.
func mkfifo(string) error { return errors.ErrUnsupported }
