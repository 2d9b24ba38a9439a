package jobstore

import (
	"errors"
	"io/fs"
	"time"

	"github.com/axqua/jobstore/internal/dirstamp"
)

// nextRetry is how long StartNext leaves a job whose Start failed with an
// error of its own (a record it cannot read, a write that failed) before it
// tries it again.
const nextRetry = time.Minute

// passedOver reports whether a failed Start passed the job over without a
// failure of the job's own: a cancel request, a terminal state, a race lost
// to another runner or claim, a directory removed meanwhile, a job not yet
// due. The job is read again at the next look, which finds what it is now.
func passedOver(err error) bool {
	return errors.Is(err, ErrCancelRequested) || errors.Is(err, ErrWrongState) ||
		errors.Is(err, ErrLocked) || errors.Is(err, ErrNotOwner) || errors.Is(err, fs.ErrNotExist) || errors.Is(err, ErrNotDue)
}

// nextState is what StartNext knows of a job directory.
type nextState int

const (
	stateUnknown    nextState = iota // not read, or to be read again
	stateQueued                      // status queued, no cancel request: a candidate
	stateCancelling                  // status queued with cancel.json: never started
	stateIncomplete                  // no job.json or no status.json yet
	stateBroken                      // a record unreadable, or Start failed on its own
	stateRunning                     // running: queued again if its attempt fails with attempts left, or its runner is gone
	stateSettled                     // ended: queued again only by Retry, which changes the root
)

// nextEntry is one job directory as StartNext last read it.
type nextEntry struct {
	name        string
	seen        cleanStamp     // of the directory, taken before its records were read
	spec        dirstamp.Stamp // of its job.json, taken before the read (zero: none)
	readAt      time.Time      // when they were read (this host's clock)
	state       nextState
	kind        string // from its job.json; "" until one was read
	submittedAt time.Time
	priority    int
	due         time.Time // queued: not started before (not_before, retry_at); zero: at once
	errText     string    // the last error reported for it
	retryAt     time.Time // stateBroken after a failed Start: not tried before
	taking      bool      // a StartNext of this process is starting it, or a Run it started lives
	gone        bool      // no directory under the name at the last look
	liveIno     uint64    // its LiveDir entry's inode at the last whole read of LiveDir (0: unknown)
}

// retryDue makes e, a job whose failed Start is due to be tried again at
// now, one to read again.
func (e *nextEntry) retryDue(now time.Time) {
	if e.state == stateBroken && !e.retryAt.IsZero() && !now.Before(e.retryAt) {
		e.state, e.retryAt = stateUnknown, time.Time{}
	}
}

// read reads the records of dir into e. A directory that is not a job yet
// (no job.json), or has no status.json yet, is stateIncomplete, not an
// error. job.json is read again too: the directory may be another job's
// made under the same name.
func (e *nextEntry) read(dir JobDir) error {
	je, gone := readEntry(dir)
	if je.Spec != nil { // even if its status cannot be read: the kind is the job's for good
		e.kind, e.submittedAt, e.priority = je.Spec.Kind, je.Spec.SubmittedAt, je.Spec.Priority
		e.due, _ = dueAt(*je.Spec, je.Status)
	}
	switch {
	case gone: // removed while read: the look retires its entry
		e.state, e.gone = stateUnknown, true
		return nil
	case errors.Is(je.Err, ErrNotJob):
		e.state = stateIncomplete
		return nil
	case je.Err != nil:
		return je.Err
	}
	switch {
	case je.Status == nil:
		e.state = stateIncomplete
	case je.Status.State == Running:
		e.state = stateRunning
	case je.Status.State != Queued:
		e.state = stateSettled
	case pathExists(dir.CancelPath()):
		e.state = stateCancelling
	default:
		e.state = stateQueued
	}
	return nil
}
