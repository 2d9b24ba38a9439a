//go:build !linux

package main

import "os"

// procEndOf is how the command of ps ended, or why it could not be waited
// for.
func procEndOf(ps *os.ProcessState, waitErr error) procEnd {
	if ps == nil {
		return procEnd{err: waitErr, how: "could not be waited for: " + waitErr.Error()}
	}
	e := procEnd{exited: true}
	e.code, e.signal, e.how = exitOf(ps)
	return e
}
