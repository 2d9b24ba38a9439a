package main

import (
	"fmt"
	"time"
)

// leaseClock is what the worker knows of a job's lease: its period and
// when it was last renewed (jobstore.Run's Lease). On Linux the job's
// supervisor is told the renewals, and stops the command's processes
// before anyone may judge the worker gone should they stop (see
// supervise_linux.go).
type leaseClock interface {
	Lease() (period time.Duration, renewed time.Time)
}

// procOptions is what a jobProcess needs besides the command.
type procOptions struct {
	grace time.Duration // between the stop (SIGTERM) and the kill
	lease leaseClock
	warn  func(format string, args ...any) // a note about the worker itself
	// noCgroup is told why an attempt runs without a cgroup of its own
	// (Linux); the worker says it once.
	noCgroup func(err error)
}

// procEnd is how a job's command and the processes it started ended, as
// jobProcess.wait reports it once they are all gone (or killed).
type procEnd struct {
	exited   bool   // code, signal and how describe the command's end
	code     int    // its exit code as recorded in status.json
	signal   string // the signal that ended it, Unix; "" if none
	how      string // "exited with status 3", "was killed by signal SIGTERM (15)"
	err      error  // the command could not be waited for
	leftover string // what was done to processes it left running; "" if none
	watchdog string // why the supervisor stopped the command on its own; "" if it did not
	// stoppedBy is the stop signal the command's supervisor got itself
	// ("SIGTERM"): the worker's processes are being stopped together
	// (a service manager's stop); "" if none.
	stoppedBy string
}

// leftoverNote says what happened to the n processes (n < 0: an unknown
// number, where they cannot be counted) the command left running when it
// ended: asked to stop with stopName, and killed (killName) after the
// grace if stillThere of them (-1 unknown, 0 none) were still running then;
// unkilled of them (-1 unknown) had still not ended after the kill.
func leftoverNote(n, stillThere, unkilled int, grace time.Duration) string {
	if n == 0 {
		return ""
	}
	what := "processes"
	if n == 1 {
		what = "process"
	}
	note := fmt.Sprintf("%d %s the command left running", n, what)
	if n < 0 {
		note = "processes the command left running"
	}
	note += " got " + stopName
	switch {
	case stillThere > 0:
		note += fmt.Sprintf(", and %d still running after the grace of %v got %s", stillThere, grace, killName)
	case stillThere < 0:
		note += fmt.Sprintf(", and those still running after the grace of %v got %s", grace, killName)
	}
	switch {
	case unkilled > 0:
		note += fmt.Sprintf("; %d had not ended when the job was recorded (the kill takes effect when they leave the kernel)", unkilled)
	case unkilled < 0:
		note += "; some had not ended when the job was recorded"
	}
	return note
}

// joinNote adds note to a message, after what it says already.
func joinNote(msg, note string) string {
	if msg == "" {
		return note
	}
	return msg + "; " + note
}
