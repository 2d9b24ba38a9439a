package jobstore

import (
	"path/filepath"
	"sync"

	"github.com/fsnotify/fsnotify"
)

// The process's one OS watcher, shared by every Watch: created by the first
// subscription, closed with the last, so that N watchers cost one inotify
// instance (fs.inotify.max_user_instances is often 128) and one goroutine,
// not N. Unexported and never replaced by a caller.
var events struct {
	mu  sync.Mutex
	hub *eventHub // nil while nobody watches
}

// eventHub is one fsnotify watcher and the subscriptions it serves.
type eventHub struct {
	w    *fsnotify.Watcher
	done chan struct{} // closed when dispatch has returned

	mu   sync.Mutex // guards dirs; taken after events.mu
	dirs map[string]map[*subscription]struct{}
	n    int // subscriptions in all
}

// subscription wakes one watcher (a Watch of status.json, a Run's wait for
// cancel.json) when the file it follows in its job directory changes.
type subscription struct {
	hub  *eventHub
	dir  string
	name string        // the file followed: StatusFile, CancelFile; "" for every entry
	wake chan struct{} // buffered 1: wakes coalesce
}

// subscribe returns a subscription to changes of the file name in dir (an
// absolute path), or nil if the OS gives no events for it (no backend, no
// instance or watch left, the directory gone): the caller then polls alone.
func subscribe(dir, name string) *subscription {
	events.mu.Lock()
	defer events.mu.Unlock()
	h := events.hub
	if h == nil {
		w, err := fsnotify.NewWatcher()
		if err != nil {
			return nil
		}
		h = &eventHub{w: w, done: make(chan struct{}), dirs: map[string]map[*subscription]struct{}{}}
		go h.dispatch()
		events.hub = h
	}
	s := &subscription{hub: h, dir: dir, name: name, wake: make(chan struct{}, 1)}
	h.mu.Lock()
	subs := h.dirs[dir]
	h.mu.Unlock()
	if subs == nil {
		// Add outside h.mu: dispatch takes h.mu for every event, and Add
		// waits for the backend, which may be sending one.
		if err := h.w.Add(dir); err != nil {
			if h.n == 0 {
				events.hub = nil
				h.close()
			}
			return nil
		}
		subs = map[*subscription]struct{}{}
	}
	h.mu.Lock()
	subs[s] = struct{}{}
	h.dirs[dir] = subs
	h.n++
	h.mu.Unlock()
	return s
}

// cancel ends the subscription; the last one of a directory removes its
// watch, the last one of all closes the OS watcher and waits for its
// goroutines, so that nothing of it is left when cancel returns.
func (s *subscription) cancel() {
	events.mu.Lock()
	defer events.mu.Unlock()
	h := s.hub
	h.mu.Lock()
	subs := h.dirs[s.dir]
	delete(subs, s)
	last := len(subs) == 0
	if last {
		delete(h.dirs, s.dir)
	}
	h.n--
	all := h.n == 0
	h.mu.Unlock()
	if all {
		events.hub = nil
		h.close()
		return
	}
	if last {
		_ = h.w.Remove(s.dir) // fails if the directory is gone, and with it the watch: nothing to undo
	}
}

// close closes the OS watcher and waits for dispatch to return. Callers
// hold events.mu and have detached h.
func (h *eventHub) close() {
	_ = h.w.Close()
	<-h.done
}

// dispatch wakes the subscribers of a directory when the file each follows
// is created, written, renamed or removed, or the directory itself goes. It
// returns when the watcher is closed. A watcher error (an event queue
// overflow) wakes everyone: each reads and finds out for itself.
func (h *eventHub) dispatch() {
	defer close(h.done)
	evs, errs := h.w.Events, h.w.Errors
	for evs != nil || errs != nil {
		select {
		case ev, ok := <-evs:
			if !ok {
				evs = nil
				continue
			}
			h.mu.Lock()
			name := filepath.Base(ev.Name)
			for s := range h.dirs[filepath.Dir(ev.Name)] {
				if s.name == name || s.name == "" {
					s.wakeLocked()
				}
			}
			for s := range h.dirs[ev.Name] { // the directory itself removed or renamed
				s.wakeLocked()
			}
			h.mu.Unlock()
		case _, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			h.mu.Lock()
			for _, subs := range h.dirs {
				for s := range subs {
					s.wakeLocked()
				}
			}
			h.mu.Unlock()
		}
	}
}

// wakeLocked wakes s; its hub's mu is held.
func (s *subscription) wakeLocked() {
	select {
	case s.wake <- struct{}{}:
	default: // a wake is already waiting
	}
}
