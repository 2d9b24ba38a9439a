package supervise

import (
	"fmt"
	"time"
)

// LeaseClock is what the worker knows of a job's lease: its period and
// when it was last renewed (jobstore.Run's Lease). On Linux the job's
// supervisor is told the renewals, and stops the command's processes
// before anyone may judge the worker gone should they stop (see
// supervisor_linux.go).
type LeaseClock interface {
	Lease() (period time.Duration, renewed time.Time)
}

// OutputWaitDelay is how long the worker reads the command's output once
// the command and what it started are gone (Process.Wait), for a process
// outside them that still holds the pipe: on Linux one started for the
// command by another process (a service manager), elsewhere one that left
// the command's process group too.
const OutputWaitDelay = 2 * time.Second

// StopSettle is how long, after the command died of a stop signal
// (SIGTERM, SIGINT, SIGHUP) that did not come from the supervisor, the
// supervisor waits for one of its own before it reports: a service manager
// stopping a whole control group signals every process in turn, in no
// set order, and the command's death is then the stop's, not a failure.
// The worker should wait as long for its own.
const StopSettle = time.Second

// Options is what a Process needs besides the command.
type Options struct {
	Grace time.Duration // between the stop (SIGTERM) and the kill
	Lease LeaseClock
	Warn  func(format string, args ...any) // a note about the worker itself
	// NoCgroup is told why an attempt runs without a cgroup of its own
	// (Linux); the worker says it once.
	NoCgroup func(err error)
}

// End is how a job's command and the processes it started ended, as
// Process.Wait reports it once they are all gone (or killed).
type End struct {
	Exited   bool   // Code, Signal and How describe the command's end
	Code     int    // its exit code as recorded in status.json
	Signal   string // the signal that ended it, Unix; "" if none
	How      string // "exited with status 3", "was killed by signal SIGTERM (15)"
	Err      error  // the command could not be waited for
	Leftover string // what was done to processes it left running; "" if none
	Watchdog string // why the supervisor stopped the command on its own; "" if it did not
	// StoppedBy is the stop signal the command's supervisor got itself
	// ("SIGTERM"): the worker's processes are being stopped together
	// (a service manager's stop); "" if none.
	StoppedBy string
}

// leftoverNote says what happened to the n processes (n < 0: an unknown
// number, where they cannot be counted) the command left running when it
// ended: asked to stop with StopName, and killed (KillName) after the
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
	note += " got " + StopName
	switch {
	case stillThere > 0:
		note += fmt.Sprintf(", and %d still running after the grace of %v got %s", stillThere, grace, KillName)
	case stillThere < 0:
		note += fmt.Sprintf(", and those still running after the grace of %v got %s", grace, KillName)
	}
	switch {
	case unkilled > 0:
		note += fmt.Sprintf("; %d had not ended when the job was recorded (the kill takes effect when they leave the kernel)", unkilled)
	case unkilled < 0:
		note += "; some had not ended when the job was recorded"
	}
	return note
}
