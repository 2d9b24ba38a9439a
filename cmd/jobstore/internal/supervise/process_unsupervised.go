//go:build !linux

package supervise

import "os"

// endOf is how the command of ps ended, or why it could not be waited
// for.
func endOf(ps *os.ProcessState, waitErr error) End {
	if ps == nil {
		return End{Err: waitErr, How: "could not be waited for: " + waitErr.Error()}
	}
	e := End{Exited: true}
	e.Code, e.Signal, e.How = exitOf(ps)
	return e
}
