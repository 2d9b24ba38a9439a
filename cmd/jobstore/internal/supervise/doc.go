// Package supervise runs a job's command for "jobstore work" so that every
// process the command starts ends with its attempt: on Linux under a
// supervisor (the jobstore binary run again with Arg, a child subreaper,
// in a cgroup of the attempt's own where one can be had), on macOS and the
// BSDs as a process group, on Windows in a job object.
//
// The worker calls New, Start, then Terminate or Kill to stop the command,
// and Wait, which returns once the command and what it started are gone
// (or killed and counted), then Release. What escapes, per platform, is in
// docs/guarantees.md, "What ends with a job's attempt".
package supervise
