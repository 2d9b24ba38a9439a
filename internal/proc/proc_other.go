//go:build !unix && !windows

package proc

// scope is empty here, on neither Unix nor Windows (plan9, js, wasip1): no
// probe, so no pid scope; pids are never judged, and the caller's other
// evidence (a lease) alone decides.
func scope() string { return "" }

func probe(int) (State, string) { return Unknown, "" }
