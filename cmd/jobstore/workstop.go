package main

import (
	"context"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/axqua/jobstore/cmd/jobstore/internal/supervise"
)

// workStop is what the worker knows of a stop of itself: the first stop
// signal (it takes no more jobs, and waits for the running ones), and the
// forced stop (the running commands are stopped, their jobs queued again).
// A stop of the worker's service by a service manager (systemd's
// KillMode=control-group) signals the worker, the supervisors and the
// commands at once, in any order: a command that dies of it is the stop's,
// not a failure, and its job is queued again as the forced stop queues it.
type workStop struct {
	mu    sync.Mutex
	first os.Signal     // the first stop signal; nil before it
	under chan struct{} // closed with the first stop signal
	force func()        // the forced stop: the Worker's StopAndCancel
	once  sync.Once     // force
}

func newWorkStop() *workStop { return &workStop{under: make(chan struct{})} }

// signalled notes a stop signal; it reports whether it is the first.
func (s *workStop) signalled(sig os.Signal) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.first != nil {
		return false
	}
	s.first = sig
	close(s.under)
	return true
}

// signal is the first stop signal, nil if none came.
func (s *workStop) signal() os.Signal {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.first
}

// underWay reports whether a stop signal came, waiting up to wait for one.
func (s *workStop) underWay(wait time.Duration) bool {
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-s.under:
		return true
	case <-t.C:
		return false
	}
}

// forced stops the running commands and queues their jobs again, once.
func (s *workStop) forced() {
	s.once.Do(func() {
		if s.force != nil {
			s.force()
		}
	})
}

// stoppedWith reports whether the stop of the worker's processes ended
// the command as pe says: its supervisor got a stop signal itself, or the
// command died of one (supervise.IsStopCode) while the worker was stopped, or within
// supervise.StopSettle after its death. A command that exited 0 succeeded, stop or
// not.
func (s *workStop) stoppedWith(pe supervise.End) bool {
	switch {
	case !pe.Exited || (pe.Code == 0 && pe.Signal == ""):
		return false
	case pe.StoppedBy != "":
		return true
	}
	return supervise.IsStopCode(pe.Code) && s.underWay(supervise.StopSettle)
}

// stoppedCommand is what runJob does when the stop of the worker's
// processes ended its command (stoppedWith): the worker stops as a second
// stop signal stops it (its exit names the signal), and once ctx, the
// job's handler's context, ends for it (jobstore.ErrWorkerStopped) it
// returns why the command stopped, for the interrupted attempt's record.
func (s *workStop) stoppedCommand(ctx context.Context, pe supervise.End) string {
	sig := pe.StoppedBy
	if sig == "" {
		sig = signalName(s.signal())
	}
	s.signalled(stopSignalNamed(sig))
	s.forced()
	<-ctx.Done()
	return "the worker's processes were stopped (" + sig + " to the worker, the job's supervisor or the command)"
}

// stopSignalNamed is the stop signal a supervisor names (superviseReport).
func stopSignalNamed(name string) os.Signal {
	switch name {
	case "SIGINT":
		return os.Interrupt
	case "SIGHUP":
		return hangup()
	}
	return syscall.SIGTERM
}
