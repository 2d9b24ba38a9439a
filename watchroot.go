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
// done: the jobs there now, the jobs added later, their status changes,
// cancel requests and removals.
//
// It returns an *Error at once if root cannot be read. Otherwise the
// channel delivers, in this order:
//
//   - one update for each job under root, with its current records;
//   - one update with Synced set (the first update, at once, for a root
//     with no job yet);
//   - then changes as they are seen: a job added (its first update), a
//     status with a higher seq than the last one delivered, a cancel
//     request, a record that became readable or unreadable, a job removed
//     (Removed).
//
// For each job no status is delivered after one with a higher seq, and no
// update repeats the one before it. When a job changes faster than the
// receiver takes its updates, the intermediate ones are skipped (the
// latest wins), and a job added and removed between two looks may never
// be seen. After Removed, a job in the same directory is a new job, whose
// seq starts again; a job directory replaced between two looks (its
// job.json's submitted_at or kind differ) is reported as Removed and then
// as a new job.
//
// Entries are List's: dot-names, index.json and entries that are not
// directories are skipped, except a symbolic link, which is an update
// with Err of kind ErrNotRegular: it is never followed, read or watched. A
// record that is damaged, too large, a link or a FIFO is that job's Err,
// and never blocks a read; the tolerant reader's retries of a damaged
// record (DefaultReadAttempts reads DefaultReadDelay apart) are spent on
// one of several reading goroutines, without holding up other jobs. A
// root that becomes unreadable after the start is an update with Err and
// no Dir, once until its error changes; a root that is removed has its
// jobs Removed, and is listed again if it comes back.
//
// How changes are seen. Events, from the process's one shared OS watcher
// (as for Watch): one watch on root, one on each job directory. A job
// directory on a filesystem whose every change is told by an event (on
// Linux: ext2/3/4, xfs, btrfs, tmpfs, ramfs, f2fs, zfs, bcachefs, jfs,
// reiserfs, nilfs2) and watched is left to its events. Every other job
// directory is polled: on NFS, SMB, Ceph, FUSE, overlayfs and any
// filesystem not known to be local (on every OS but Linux), where another
// host or a FUSE server changes files without an event; and where no
// watch could be had (beyond fs.inotify.max_user_watches, with events
// unavailable, or WatchRoot's events turned off). The poll runs every
// interval (WithPollInterval, default DefaultPollInterval): one lstat of
// each polled job directory, relative to a descriptor of root, and when
// the directory's modification time changed (a write renames status.json
// into it; cancel.json is linked or renamed in), its status.json and
// cancel.json are read again (job.json only while it has not been read).
// A directory whose time stays the same is read once more when the tick
// of the filesystem's clock that gave it is surely over (100 ms after the
// time was first seen, or 2 s for a time in whole seconds, as FAT, ext3
// and HFS+ write them), since a second change within one tick leaves the
// same time ("racily clean", as git calls it): such a change is seen that
// much later. The root itself is stat'ed at each poll, and listed again
// when its path names another directory or, unless its events tell
// everything, when its time changed.
//
// The first listing's jobs are read before Synced and watched (or handed
// to the poll) right after it, each followed by a stat of its directory:
// one whose time is not older than the listing (less 2 s, and a minute
// more where the time may come from another host's clock) is read again,
// since a change between its read and its watch told nobody. When the OS
// drops events (its queue overflowed), the root is listed again and every
// job directory stat'ed, and the jobs whose time moved since their last
// read are read again.
//
// What the poll does not see: a record rewritten in place (not renamed
// into place) changes no directory time; on a polled job only an event
// tells of it. On NFS a stat may be answered from the client's attribute
// cache, so a change made by another host may reach the poll only after
// the mount's directory attribute timeout (acdirmin to acdirmax, 30 to 60
// s by default; lower them, or mount with noac, for less).
//
// The channel is closed when ctx is done; by then every goroutine, watch
// and descriptor of the WatchRoot is released. A receiver that stops
// receiving must cancel ctx. Cost: one goroutine and max(4, GOMAXPROCS)
// readers (GOMAXPROCS more while the first listing is read), a descriptor
// of root during each poll, one OS watch per job directory plus one for
// root (see Watch for the limits), and, per job, its records and a few
// hundred bytes (BenchmarkWatchRootMemoryPerJob).
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
