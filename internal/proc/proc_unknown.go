//go:build aix || hurd || solaris

package proc

// scope is empty on Unix systems with no probe (solaris includes illumos):
// this package reads neither a process's start time nor a boot identity on
// them, so there is no pid scope; pids are never judged, and the caller's
// other evidence (a lease) alone decides.
func scope() string { return "" }

func probe(int) (State, string) { return Unknown, "" }
