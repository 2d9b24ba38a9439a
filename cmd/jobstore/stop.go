package main

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// This file is how watch and list --watch are stopped: both follow until
// the user stops them (Ctrl-C, SIGINT, SIGTERM), and both then stop the same
// way. Being stopped is no error: the command brings its display up to
// date, says on a last line (or in a last JSON event) that it stopped and
// what it last saw, and prints nothing on stderr. Then it ends as a process
// that signal ends: on Unix by the signal itself, re-raised once its handler
// is reset (a shell reports 130 or 143, and a script run from the shell stops
// too, as it would with a command that did not catch the signal); where a
// process cannot signal itself (Windows), with exit code 128+n, 130 or 143.
// So "jobstore watch DIR && next" never goes on to next because the user
// stopped the watch: exit status 0 means the job succeeded, and nothing else.

// stopSignals are the signals that stop a watcher.
func stopSignals() []os.Signal { return []os.Signal{os.Interrupt, syscall.SIGTERM} }

// untilStopped returns a context that is done when a stop signal arrives,
// with a *stopped naming it as its cause (stopCause); the signals are
// caught until release is called. One the process was started with
// ignored (a background job of a shell without job control ignores SIGINT)
// stays ignored.
func untilStopped(parent context.Context) (ctx context.Context, release func()) {
	ctx, cancel := context.WithCancelCause(parent)
	sigs := make(chan os.Signal, 1)
	for _, sig := range stopSignals() {
		if !signal.Ignored(sig) {
			signal.Notify(sigs, sig)
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		select {
		case sig := <-sigs:
			cancel(&stopped{sig})
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		cancel(nil)
		<-done
		signal.Stop(sigs)
	}
}

// stopCause is the stop signal that ended ctx (untilStopped), nil if none
// did.
func stopCause(ctx context.Context) *stopped {
	var st *stopped
	if errors.As(context.Cause(ctx), &st) {
		return st
	}
	return nil
}

// signalName is how a stop signal is named on the last line.
func signalName(sig os.Signal) string {
	switch sig {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return sig.String()
}

// stopped is the result of a watcher stopped by a signal, after it said so
// on stdout: nothing goes to stderr, and the process ends as sig ends one
// (exitStatusOf gives 128+n; main re-raises the signal).
type stopped struct{ sig os.Signal }

func (s *stopped) Error() string { return "stopped by " + signalName(s.sig) }

// status is the status a shell reports for a process the signal ended:
// 128 + its number, which is 2 for SIGINT and 15 for SIGTERM on every Unix.
func (s *stopped) status() int {
	if s.sig == os.Interrupt {
		return 128 + 2
	}
	return 128 + 15
}

// stopSignalOf is the stop signal whose exit code code is, if any.
func stopSignalOf(code int) os.Signal {
	if code <= 128 {
		return nil
	}
	for _, sig := range stopSignals() {
		if (&stopped{sig}).status() == code {
			return sig
		}
	}
	return nil
}

// endAs ends the process as sig ends one that does not catch it: the
// handler is reset and the signal sent to this process; where that cannot
// be done, it exits with code.
func endAs(sig os.Signal, code int) {
	signal.Reset(sig)
	if p, err := os.FindProcess(os.Getpid()); err == nil && p.Signal(sig) == nil {
		time.Sleep(time.Second) // the signal is on its way and ends the process
	}
	os.Exit(code)
}
