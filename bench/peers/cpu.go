package main

import "time"

// serverPID names a server's process by the file its pid is in: the first
// line of PostgreSQL's postmaster.pid, or Redis's pidfile. With tree set,
// the processes whose parent it is count too (PostgreSQL's backends and
// background workers).
type serverPID struct {
	pidFile string
	tree    bool
}

// serverCPU is the user and system CPU time of the server's processes, as
// the kernel counts it: each live process's own, and the children that
// have exited and been waited for by one of them (a backend of a closed
// connection). Zero with no pid file. Kernel threads (the file system's
// journal) are not counted, for any system.
func (p serverPID) serverCPU() (time.Duration, error) {
	if p.pidFile == "" {
		return 0, nil
	}
	return treeCPU(p.pidFile, p.tree)
}
