package jobstore

import (
	"context"
	"errors"
	"strings"
)

// How a Run's attempt ends when the work it was given returns: the outcome
// a Worker records for its handler, decided here, by the Run, which alone
// knows whether it finished or lost its job and why its Context ended.

// endWith ends the Run's attempt as its work's return says: err is what
// the work returned (nil: it completed), cause why the work's own context
// ended (context.Cause; nil while it runs), which may be the Run's
// Context's cause or ErrWorkerStopped. Nothing is written when the work
// finished the job itself or the Run lost its job. Otherwise, in order:
// stopped by its Worker (cause ErrWorkerStopped, the Run's Context still
// live) with an error, the job is queued again at once (interrupt); past
// its timeout, the attempt failed "timed out", whatever err is; a nil err
// is succeeded; stopped by a cancel request, cancelled; any other err,
// failed with its text. The cause, when err is or wraps it, is said once.
func (r *Run) endWith(err, cause error) error {
	r.mu.Lock()
	finished, lost := r.finished, r.lostErr != nil
	var own error // the Run's Context's cause: nil while it is live
	if r.ctx != nil {
		own = context.Cause(r.ctx.ctx)
	}
	r.mu.Unlock()
	switch {
	case finished || lost:
		return nil
	case errors.Is(cause, ErrWorkerStopped) && own == nil && err != nil:
		return r.interrupt(withCause(err, cause))
	}
	_ = r.Flush() // the work's last message stays, unless the outcome has its own
	msg := r.Status().Message
	switch {
	case errors.Is(own, context.DeadlineExceeded):
		// Past its timeout the attempt failed, whatever the work
		// returned: nil from a handler that ignored its context included.
		return r.Finish(Outcome{State: Failed, Message: msg, Error: withCause(err, own), Remedy: timeoutRemedy})
	case err == nil:
		return r.Finish(Outcome{State: Succeeded, Message: msg})
	case errors.Is(own, ErrCancelRequested):
		return r.Finish(Outcome{State: Cancelled, Message: stoppedMessage(err, own)})
	}
	return r.Finish(Outcome{State: Failed, Message: msg, Error: err.Error()})
}

// withCause is the error of an attempt whose context ended with cause and
// whose work returned err (nil: nothing): the cause's message, and err
// after it when err says more than the cause. An err that is the cause, or
// wraps it, is said once: its text with the cause's own replaced by the
// cause's message.
func withCause(err, cause error) string {
	why := causeMessage(cause)
	switch {
	case err == nil || err == cause || err.Error() == cause.Error():
		return why
	case errors.Is(err, cause):
		return strings.Replace(err.Error(), cause.Error(), why, 1)
	}
	return why + "; the handler returned: " + err.Error()
}

// stoppedMessage is the message of a job that a cancel request (cause)
// stopped and whose work returned err: who asked and why, and err when
// it says more than the end of its context. It never holds the request's
// remedy, which speaks to the handler's author, not to the job's readers.
func stoppedMessage(err, cause error) string {
	msg := "stopped: " + causeMessage(cause)
	if errors.Is(err, ErrCancelRequested) || errors.Is(err, context.Canceled) {
		return msg
	}
	return msg + "; the handler returned: " + err.Error()
}

// causeMessage is an *Error's message without its op and path, and a
// sentinel's without the package's prefix.
func causeMessage(err error) string {
	var e *Error
	if errors.As(err, &e) && e.Msg != "" {
		return e.Msg
	}
	return strings.TrimPrefix(err.Error(), "jobstore: ")
}
