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
// It returns an error when waiting cannot end in a terminal status: dir is
// not a job (ErrNotJob, at once), status.json was written by a newer
// jobstore (ErrNewerSchema), or the job directory was removed while Wait
// waited (ErrNotJob). Other read errors (a corrupt or busy status.json,
// an I/O error) are taken as passing: the runner's next write replaces the
// record, so Wait goes on waiting; Watch shows them. When ctx is done
// first, the error is an *Error that matches ctx.Err() with errors.Is.
func Wait(ctx context.Context, dir JobDir, opts ...WatchOption) (*JobStatus, error) {
	const op = "wait"
	if st, err := ReadStatus(dir); err == nil && st != nil && st.State.Terminal() {
		return st, nil // at once, even with ctx done
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop() // releases the Watch when Wait returns early
	updates, err := Watch(ctx, dir, opts...)
	if err != nil {
		return nil, err
	}
	for u := range updates {
		switch {
		case u.Status != nil && u.Status.State.Terminal():
			return u.Status, nil
		case errors.Is(u.Err, ErrNewerSchema), errors.Is(u.Err, ErrNotJob):
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
