package jobstore

import (
	"context"
)

// RootUpdate is one thing WatchRoot learned about a jobs root.
//
// An update about a job has Dir and the job's records as read just before
// it was sent, by List's rules: Spec nil if job.json is unreadable, Status
// nil if there is no status.json yet or it is unreadable, Cancel nil if
// there is no cancel request or it is unreadable, and Err the first
// problem (the directory's own, then job.json's, status.json's,
// cancel.json's). Removed: the job directory is gone (only Dir is set).
// Synced: every job has had its first update (nothing else is set). An
// update with neither Dir nor Synced is about the root itself: Err says
// what is wrong with it.
//
// The records are the receiver's own: no other update shares them.
type RootUpdate struct {
	Dir     JobDir
	Spec    *JobSpec
	Status  *JobStatus
	Cancel  *CancelRequest
	Removed bool
	Synced  bool
	Err     error
}

// WatchRoot follows every job under root, as List finds them, until ctx is
// done. It returns an *Error at once if root cannot be read. Otherwise the
// channel delivers one update for each job under root with its current
// records, then one with Synced set (the first, for a root with no job),
// then changes as they are seen: a job added, a status with a higher seq
// than the last delivered, a cancel request, a record that became readable
// or unreadable, a job removed (Removed).
//
// For each job no status follows one with a higher seq and no update
// repeats the one before it; a receiver slower than the changes gets the
// latest (a job added and removed between two looks may never be seen). A
// job directory replaced is Removed, then a new job. A link is an update
// with Err of kind ErrNotRegular, never followed; a damaged record is that
// job's Err; a root that becomes unreadable is an update with Err and no
// Dir. The channel is closed when ctx is done, with every goroutine, watch
// and descriptor released; a receiver that stops receiving must cancel ctx.
//
// How changes are seen (events, a poll every WithPollInterval), what the
// poll sees late or not at all, and the cost: docs/mechanisms.md#watchroot.
func WatchRoot(ctx context.Context, root string, opts ...WatchOption) (<-chan RootUpdate, error) {
	o := watchOptions{poll: DefaultPollInterval, events: true}
	for _, opt := range opts {
		opt(&o)
	}
	w, err := newRootWatch(root, o)
	if err != nil {
		return nil, err
	}
	go w.loop(ctx)
	return w.out, nil
}
