package jobstore

import (
	"path/filepath"
	"sync"

	"github.com/axqua/jobstore/internal/fsevents"
)

// maxFollowed bounds the incomplete job directories followed through
// events (each costs an OS watch); more wait for the scan.
const maxFollowed = 16

// maxHints bounds the names of the root's events kept for the next look;
// past it, the look scans the root instead.
const maxHints = 1024

// watch returns a channel that is closed at the next file system event of
// root, of its LiveDir, or of an incomplete job directory followed; nil
// when the OS gives no events for root (the scan alone then).
func (c *nextCache) watch() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.events == nil {
		c.events = newNextEvents(c.root)
	}
	c.events.watchLive()
	return c.events.next()
}

// follow subscribes to the status.json of the job directories seen
// incomplete (a submitter writing the records in place: Submit itself
// renames a whole job into place), up to maxFollowed, and ends the
// following of those no longer incomplete. It reports whether it began to
// follow one.
func (c *nextCache) follow() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	ev := c.events
	if ev == nil || ev.root == nil {
		return false
	}
	for dir := range ev.dirs {
		if e := c.entries[filepath.Base(dir)]; e == nil || e.state != stateIncomplete {
			ev.unfollow(dir)
		}
	}
	added := false
	for e := range c.incomplete {
		if len(ev.dirs) < maxFollowed && ev.follow(filepath.Join(c.root, e.name)) {
			added = true
		}
	}
	return added
}

// nextEvents is the file system watch of a root for StartNext and the
// Worker: the root itself (every entry), its LiveDir and the incomplete job
// directories followed, all into one sink. Every event closes the channel
// next returned, waking every waiting call; the names of the root's entries
// that changed are kept for the next look (takeHints), which reads those
// alone rather than the whole root.
type nextEvents struct {
	sink     *fsevents.Sink
	rootPath string                            // as the sink's changes name it
	root     *fsevents.Subscription            // nil: no events here
	live     *fsevents.Subscription            // nil: none yet (LiveDir missing) or no events
	dirs     map[string]*fsevents.Subscription // nil value: the OS gave none (not tried again)

	mu      sync.Mutex
	changed chan struct{}
	hints   map[string]struct{} // names of root's entries that changed since takeHints
	full    bool                // events were lost: the next look scans the root
	done    chan struct{}       // closed by stop
	wg      sync.WaitGroup
}

func newNextEvents(root string) *nextEvents {
	ev := &nextEvents{sink: fsevents.NewSink(), rootPath: filepath.Clean(root), dirs: map[string]*fsevents.Subscription{},
		changed: make(chan struct{}), hints: map[string]struct{}{}, done: make(chan struct{}),
		full: true} // what changed before the watch is unknown
	if ev.root = fsevents.Subscribe(root, nil, ev.sink); ev.root != nil {
		ev.wg.Go(ev.forward)
	}
	return ev
}

// watchLive subscribes to LiveDir unless it is subscribed already or root
// gives no events; a LiveDir still missing is tried again at the next call.
func (ev *nextEvents) watchLive() {
	if ev.root != nil && ev.live == nil {
		ev.live = fsevents.Subscribe(filepath.Join(ev.rootPath, LiveDir), nil, ev.sink)
	}
}

// next returns the channel the next event closes.
func (ev *nextEvents) next() <-chan struct{} {
	if ev.root == nil {
		return nil
	}
	ev.mu.Lock()
	defer ev.mu.Unlock()
	return ev.changed
}

// takeHints returns the names of the root's entries that changed since the
// last call, and full if events may have been missed (the look then scans
// the whole root). A nil ev (no watch) has none.
func (ev *nextEvents) takeHints() (names []string, full bool) {
	if ev == nil {
		return nil, false
	}
	ev.mu.Lock()
	defer ev.mu.Unlock()
	for name := range ev.hints {
		names = append(names, name)
	}
	clear(ev.hints)
	full, ev.full = ev.full, false
	return names, full
}

// forward keeps the names of the root's changes for the look and closes
// the channel next returned, on every wake of the sink.
func (ev *nextEvents) forward() {
	var buf []fsevents.Change
	for {
		select {
		case <-ev.sink.Ready():
			changes, lost := ev.sink.Take(buf[:0])
			ev.mu.Lock()
			ev.full = ev.full || lost
			for _, ch := range changes {
				switch {
				case ch.Dir != ev.rootPath:
				case ch.Name == "" || len(ev.hints) >= maxHints:
					ev.full = true
				default:
					ev.hints[ch.Name] = struct{}{}
				}
			}
			close(ev.changed)
			ev.changed = make(chan struct{})
			ev.mu.Unlock()
			buf = changes
		case <-ev.done:
			return
		}
	}
}

// follow subscribes to status.json in dir unless it is followed already,
// and reports whether it did.
func (ev *nextEvents) follow(dir string) bool {
	if _, ok := ev.dirs[dir]; ok {
		return false
	}
	sub := fsevents.Subscribe(dir, []string{StatusFile}, ev.sink)
	ev.dirs[dir] = sub
	return sub != nil
}

// unfollow ends the watch of dir. The OS watch is removed in the
// background: that waits (see nextCacheIdle), and nothing waits for it.
func (ev *nextEvents) unfollow(dir string) {
	sub := ev.dirs[dir]
	delete(ev.dirs, dir)
	if sub != nil {
		go sub.Cancel()
	}
}

// stop ends every watch and the forwarding goroutine.
func (ev *nextEvents) stop() {
	close(ev.done)
	ev.wg.Wait()
	for _, sub := range ev.dirs {
		if sub != nil {
			sub.Cancel()
		}
	}
	if ev.live != nil {
		ev.live.Cancel()
	}
	if ev.root != nil {
		ev.root.Cancel()
	}
}
