package jobstore

import (
	"context"
	"errors"
)

// Wait returns the job's terminal status (succeeded, failed, cancelled or
// lost) once it has one: at once if status.json already says so (whatever
// ctx), else as
// soon as Watch delivers it (file system events on this host, a poll every
// opts' interval, default 1 s, for other hosts' writes on NFS, SMB and
// FUSE). opts are Watch's.
//
// It returns an error, naming the file, as soon as waiting cannot end in a
// terminal status: dir is not a job (ErrNotJob) or was removed while Wait
// waited (ErrNotJob); dir is a symbolic link, or status.json is not a
// regular file (a FIFO, a link, a directory: ErrNotRegular); status.json
// is larger than any record jobstore writes (ErrTooLarge); it was written
// by a newer jobstore (ErrNewerSchema). Other read errors (a corrupt or
// busy status.json, an I/O error) are taken as passing: the runner's next
// write replaces the record, so Wait goes on waiting; Watch shows them.
// When ctx is done first, the error is an *Error that matches ctx.Err()
// with errors.Is.
func Wait(ctx context.Context, dir JobDir, opts ...WatchOption) (*JobStatus, error) {
	const op = "wait"
	dir = dir.clean()
	st, err := ReadStatus(dir)
	switch {
	case err == nil && st != nil && st.State.Terminal():
		return st, nil // at once, even with ctx done
	case neverAnswers(err):
		return nil, err
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop() // releases the Watch when Wait returns early
	updates, err := watch(ctx, op, dir, opts...)
	if err != nil {
		return nil, err
	}
	for u := range updates {
		switch {
		case u.Status != nil && u.Status.State.Terminal():
			return u.Status, nil
		case neverAnswers(u.Err):
			return nil, u.Err
		}
	}
	// Watch closes its channel early only when ctx is done.
	msg := "stopped waiting for the job to end"
	if cause := context.Cause(ctx); cause != nil && cause != ctx.Err() {
		msg += " (" + cause.Error() + ")"
	}
	return nil, errBecause(op, string(dir), ctx.Err(), msg, "")
}

// neverAnswers reports whether err, from reading a job's status, says that
// no later read can give a status: the job is gone (ErrNotJob), its
// directory is a link or its status.json is not a regular file
// (ErrNotRegular), status.json is larger than any record a writer makes
// (ErrTooLarge), or it was written by a newer jobstore (ErrNewerSchema).
func neverAnswers(err error) bool {
	for _, k := range [...]error{ErrNotJob, ErrNotRegular, ErrTooLarge, ErrNewerSchema} {
		if errors.Is(err, k) {
			return true
		}
	}
	return false
}
