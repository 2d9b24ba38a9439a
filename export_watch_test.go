package jobstore

import (
	"context"
	"time"

	"github.com/axqua/jobstore/internal/fsevents"
)

// WithoutEvents turns file system events off in Watch, leaving the safety
// poll alone, as on a filesystem that gives none.
func WithoutEvents() WatchOption { return withoutEvents() }

// WithMaxWatches makes WatchRoot watch at most n job directories, as when
// the OS gives no more watches.
func WithMaxWatches(n int) WatchOption { return withMaxWatches(n) }

// WatchedDirs is how many directories the process's shared OS watcher
// watches, and whether it exists at all.
func WatchedDirs() (dirs int, exists bool) { return fsevents.Watched() }

// ContextPolling is r.Context, except that a context it starts polls for
// cancel.json every poll (an hour: events alone end it).
func ContextPolling(r *Run, poll time.Duration) context.Context {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ctx == nil {
		r.ctx = newRunContext(r.dir, r.endCause(), poll)
	}
	return r.ctx.ctx
}
