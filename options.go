package jobstore

import (
	"fmt"
	"time"
)

// StartOption configures Start.
type StartOption func(*startOptions)

type startOptions struct {
	progressInterval time.Duration
	host             string // WithHost; HostID() when not set
	hostSet          bool
	lease            time.Duration // WithLease; DefaultLease when 0
	next             nextOptions   // StartNext's own (next.go); Start ignores them
}

// DefaultProgressInterval is how often, at most, a Run writes the progress
// reported to it, unless WithProgressInterval says otherwise.
const DefaultProgressInterval = 100 * time.Millisecond

// WithProgressInterval sets how often, at most, Run.Progress writes
// status.json: one write per d carries the latest values. 0 writes on every
// call, before Progress returns. A negative d makes Start fail with
// ErrInvalid.
func WithProgressInterval(d time.Duration) StartOption {
	return func(o *startOptions) { o.progressInterval = d }
}

// DefaultLease is the lease a runner takes unless WithLease says otherwise:
// long enough that an NFS client's directory attribute cache (acdirmax, 60 s
// by default) cannot hide a fence from a paused runner (see "Many hosts" in
// docs/platforms.md for the bound), short enough that a dead runner on
// another host is marked lost within about two minutes.
const DefaultLease = 90 * time.Second

// minLease is the shortest lease WithLease accepts: renewals every third of
// it must be possible on a loaded machine.
const minLease = 300 * time.Millisecond

// WithLease sets the lease of the Run's claim on its job: the Run renews it
// every d/3 in the background (a small file in the job's attempt
// directory), and a process on another host judges the runner gone, and may
// mark the job lost or start it again, only once it has seen the lease
// unchanged for a whole d by its own clock. A Run whose last renewal is 2d/3
// old by its own clock (it was paused: a debugger, SIGSTOP, a laptop's
// sleep) writes nothing more until it has established its claim again,
// with operations atomic at the server: if nobody took the job over
// meanwhile it goes on (as the next attempt), else every write fails with
// ErrNotOwner. Default DefaultLease; a d below 300 ms makes Start fail with
// ErrInvalid. On one host, where job.lock and the process table decide, the
// lease is never waited for.
func WithLease(d time.Duration) StartOption {
	return func(o *startOptions) { o.lease = d }
}

// WithHost sets the host identity the Run records in status.json's host
// field, instead of HostID(). Processes that share an identity and a
// process table judge each other's pids; any other process judges the Run
// by its lease. An identity longer than 255 bytes or with control
// characters makes Start fail with ErrInvalid; "" records no host, so the
// Run is judged by its lease alone, even on its own host.
func WithHost(id string) StartOption {
	return func(o *startOptions) { o.host, o.hostSet = id, true }
}

// newStartOptions applies opts over the defaults and checks them; an
// invalid value is ErrInvalid.
func newStartOptions(op string, dir JobDir, opts []StartOption) (startOptions, error) {
	o := startOptions{progressInterval: DefaultProgressInterval, lease: DefaultLease}
	for _, opt := range opts {
		opt(&o)
	}
	if o.progressInterval < 0 {
		return o, errInvalid(op, string(dir), "progress interval", o.progressInterval, "0 (write every update) or more",
			fmt.Sprintf("%v is negative", o.progressInterval), "")
	}
	if o.lease == 0 {
		o.lease = DefaultLease
	}
	if o.lease < minLease {
		return o, errInvalid(op, string(dir), "lease", o.lease, fmt.Sprintf("%v or more", minLease),
			fmt.Sprintf("%v is too short to be renewed every third of it", o.lease), "")
	}
	if o.hostSet {
		return o, validateHostID(o.host)
	}
	h, err := HostID()
	o.host = h
	return o, err
}
