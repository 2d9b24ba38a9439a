package jobstore

import (
	"context"
	"errors"
	"io/fs"
	"time"

	"github.com/axqua/jobstore/internal/fsevents"
)

// Update is one thing Watch learned: a status, or an error reading it.
// Exactly one of them is set, except for the first update of a job with no
// status.json yet, which has neither (Status nil: nothing has run yet).
type Update struct {
	Status *JobStatus // the receiver's own copy
	Err    error
}

// Watch follows a job's status.json until the job ends or ctx is done.
//
// It returns an *Error of kind ErrNotJob at once if dir has no job.json, and
// ErrNotRegular if dir is a symbolic link (never followed).
// Otherwise it returns a channel that delivers, in this order:
//
//   - the current status first (Status nil if there is no status.json yet);
//   - then each newer status, by seq. Statuses may be skipped when they
//     come faster than the receiver takes them (the latest wins), but none
//     is delivered twice or after one with a higher seq;
//   - a read error (a corrupt or unreadable status.json, a job directory
//     that was removed) as Update.Err, once until something changes;
//     watching goes on, except after ErrNewerSchema, which is the last
//     update.
//
// The channel is closed after a terminal status (succeeded, failed,
// cancelled, lost) is delivered, after ErrNewerSchema, or when ctx is done;
// by then the watcher's goroutine, timer and file system watch are
// released. A receiver that stops receiving must cancel ctx.
//
// Change is noticed two ways. File system events on the job directory
// (a replace makes a new file, so the directory is watched, not the file)
// give a status written on this machine within milliseconds: inotify on
// Linux, kqueue on macOS and the BSDs, ReadDirectoryChangesW on Windows. On
// NFS, SMB and FUSE filesystems a change made by another host (or by a FUSE
// server itself) gives no event; and events may be unavailable (no
// inotify instance or watch left, an OS without a backend). So status.json
// is also read every poll interval (WithPollInterval, default 1 s), and
// Watch works on events alone, on the poll alone, or both.
//
// Cost: one goroutine per Watch. All the Watch calls of a process share one
// OS watcher, made by the first and closed with the last: on Linux one
// inotify instance (one descriptor and three goroutines, however many jobs
// are watched) and one inotify watch per watched directory, so 1,000
// concurrent watchers hold about 1,000 goroutines, 1 descriptor and 1,000
// watches. The limits are fs.inotify.max_user_watches
// (often 8,192 or more) for directories, and memory for goroutines. With
// kqueue each watched directory costs a descriptor per file in it (about
// four), so the process's descriptor limit (ulimit -n, often 256 on macOS)
// bounds the watchers there; on Windows each directory costs a handle.
// When the OS refuses a watch, that Watch goes on with the poll alone.
func Watch(ctx context.Context, dir JobDir, opts ...WatchOption) (<-chan Update, error) {
	return watch(ctx, "watch", dir, opts...)
}

// watch is Watch, whose errors name op: "watch", or the caller's ("wait").
func watch(ctx context.Context, op string, dir JobDir, opts ...WatchOption) (<-chan Update, error) {
	dir = dir.clean()
	o := watchOptions{poll: DefaultPollInterval, events: true}
	for _, opt := range opts {
		opt(&o)
	}
	if err := isJob(op, dir); err != nil {
		return nil, err
	}
	w := &watcher{dir: dir, poll: o.poll, out: make(chan Update)}
	if o.events {
		w.sink = fsevents.NewSink()
		w.sub = fsevents.Subscribe(string(dir), []string{StatusFile}, w.sink) // nil: no events, the poll alone
	}
	go w.run(ctx)
	return w.out, nil
}

// watcher is the state of one Watch.
type watcher struct {
	dir  JobDir
	poll time.Duration
	out  chan Update
	sink *fsevents.Sink
	sub  *fsevents.Subscription // nil without events

	delivered bool   // something was delivered
	seq       uint64 // the seq of the last status delivered (0: none)
	lastErr   string // the last error delivered, until a status is
}

func (w *watcher) run(ctx context.Context) {
	defer close(w.out)
	var wake <-chan struct{}
	if w.sub != nil {
		defer w.sub.Cancel()
		wake = w.sink.Ready()
	}
	tick := time.NewTicker(w.poll)
	defer tick.Stop()

	var next Update // waiting to be delivered, if pending
	pending := w.consider(w.read(), &next, false)
	for {
		var out chan<- Update
		if pending {
			out = w.out
		}
		select {
		case out <- next:
			if w.sent(next) {
				return
			}
			pending, next = false, Update{}
		case <-wake:
			w.sink.Take(nil) // which change does not matter: there is one file to read
			pending = w.consider(w.read(), &next, pending)
		case <-tick.C:
			pending = w.consider(w.read(), &next, pending)
		case <-ctx.Done():
			return
		}
	}
}

// read reads status.json as an update.
func (w *watcher) read() Update {
	st, err := ReadStatus(w.dir)
	if err != nil {
		return Update{Err: err}
	}
	return Update{Status: st}
}

// consider decides whether u is to be delivered, and if so puts it in
// *next (replacing what waits there: the latest wins). It returns whether
// an update waits. The first update is always delivered. Later: a status
// newer than the last delivered and than the one waiting; an error unless
// it is the last one delivered again, or a status waits (a status is newer
// news than a read error, which the next read finds again if it lasts). A
// final update waiting is never replaced.
func (w *watcher) consider(u Update, next *Update, pending bool) bool {
	if pending && w.final(*next) {
		return true
	}
	switch {
	case !w.delivered && !pending:
	case u.Status != nil:
		if u.Status.Seq <= w.seq || pending && next.Status != nil && u.Status.Seq <= next.Status.Seq {
			return pending
		}
	case u.Err != nil:
		if pending && next.Status != nil || u.Err.Error() == w.lastErr {
			return pending
		}
	default: // no status.json (any more): nothing newer to say
		return pending
	}
	*next = u
	return true
}

// sent records a delivered update and reports whether it was the last.
func (w *watcher) sent(u Update) (last bool) {
	w.delivered = true
	if u.Status != nil {
		w.seq, w.lastErr = u.Status.Seq, ""
	}
	if u.Err != nil {
		w.lastErr = u.Err.Error()
	}
	return w.final(u)
}

// final reports whether u ends the watch.
func (w *watcher) final(u Update) bool {
	return u.Status != nil && u.Status.State.Terminal() || errors.Is(u.Err, ErrNewerSchema)
}

// isJob checks that dir is a job directory (never a link: ErrNotRegular)
// holding job.json (else ErrNotJob).
func isJob(op string, dir JobDir) error {
	d, err := openJobDir(op, dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if _, err := d.Lstat(SpecFile); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return errNotJob(op, dir)
		}
		return errIO(op, dir.SpecPath(), err, "cannot look at the job", "check the path and its permissions")
	}
	return nil
}
