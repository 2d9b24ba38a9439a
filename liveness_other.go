//go:build !linux && !darwin && !windows && !freebsd && !netbsd && !openbsd && !dragonfly

package jobstore

// No pid scope here: pids are never judged, and the lease alone decides.
func pidScope() string { return "" }

func probeProcess(int) (procState, string) { return procUnknown, "" }
