// Package fsevents shares one OS file watcher (fsnotify's inotify on Linux
// and kqueue on macOS and the BSDs; on Windows its own ReadDirectoryChangesW
// watcher, watcher_windows.go) among every watch of the process, so that N
// watches cost one inotify instance (fs.inotify.max_user_instances is often
// 128) and one goroutine, not N.
//
// A consumer makes a Sink and subscribes directories to it: one name in a
// directory, a few names, or every entry. Events wake the Sink and name
// what changed; they never say what is there now, so a consumer reads the
// file system after each wake, and keeps a safety poll, because events are
// not always available: none cross hosts on NFS, SMB or FUSE, and the OS
// may refuse a watch (fs.inotify.max_user_watches), in which case
// Subscribe returns nil.
//
// A watched directory that is removed or renamed away takes its OS watch
// with it. The hub notices (the directory's own Remove or Rename event, or
// its parent's) and sets the watch up again on whatever directory has that
// path once one exists: at once if one is already there, else when its
// parent reports it created, which the hub watches for as long as the
// directory is missing and subscribed; a Subscribe to the path also tries
// again. Each time, the subscribers get a Change with Name "" and look.
// (On Windows a watch holds its directory open; when the directory is
// deleted the read fails, the hub removes the watch, and the deletion
// completes.)
//
// Paths are made absolute and clean; one directory reached through two
// spellings (a symbolic link in the path) is two watches to the hub but one
// to the OS, which reports its events under the first spelling: subscribe
// each directory by one path.
package fsevents

import (
	"errors"
	"maps"
	"path/filepath"
	"runtime"
	"slices"
	"sync"

	"github.com/fsnotify/fsnotify"
)

// shared is the process's one OS watcher, shared by every subscription: created by
// the first, closed with the last. mu serializes the hub's life and every
// Add and Remove of its watcher; it is never taken by the goroutine that
// reads events, which must keep reading for an Add to return (on Windows
// the watcher's reader runs each Add, and may be sending an event).
var shared struct {
	mu  sync.Mutex
	hub *hub // nil while nobody watches
}

// hub is one OS watcher and the subscriptions it serves.
type hub struct {
	w     *osWatcher
	done  chan struct{} // closed when dispatch has returned
	quit  chan struct{} // closed when the hub is shut down
	fix   chan struct{} // buffered 1: wakes the repairer
	fixed chan struct{} // closed when the repairer has returned

	mu      sync.Mutex // guards what follows; taken after shared.mu, never across a call to w
	dirs    map[string]*dirWatch
	pending map[string]struct{} // directories whose watch the repairer sets up again
	checks  map[string]struct{} // live watches the repairer checks (after an overflow)
	n       int                 // subscriptions in all
}

// dirWatch is the hub's state of one directory.
type dirWatch struct {
	subs        []*Subscription
	live        bool // as far as the hub knows, the OS watches the directory
	holds       int  // missing subdirectories whose return this watch waits for
	holdsParent bool // missing: holds a watch on its parent to see it return
}

// A Subscription delivers the events of one directory to a Sink until
// Cancel.
type Subscription struct {
	hub       *hub
	dir       string
	names     []string // nil: every entry
	sink      *Sink
	cancelled bool // guarded by shared.mu
}

// Subscribe makes events about dir go to sink: changes to the entries
// named in names (nil means every entry) and to dir itself. names is kept:
// do not modify it afterwards.
//
// It returns nil if the OS gives no events for dir now (no backend, no
// instance or watch left, dir missing or not a directory): the caller then
// polls alone. Otherwise the watch is in place when Subscribe returns, so
// a change made after Subscribe returns is reported, and one made before
// is found by a look the caller makes after subscribing.
func Subscribe(dir string, names []string, sink *Sink) *Subscription {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil
	}
	s, closed := subscribe(dir, names, sink)
	if closed != nil {
		<-closed.fixed
	}
	return s
}

// subscribe is Subscribe under shared.mu; closed is a hub it shut down,
// whose repairer the caller waits for once shared.mu is released.
func subscribe(dir string, names []string, sink *Sink) (s *Subscription, closed *hub) {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	h := shared.hub
	if h == nil {
		if h = newHub(); h == nil {
			return nil, nil
		}
		shared.hub = h
	}
	if !h.ensure(dir) {
		if h.n == 0 {
			h.shutdown()
			return nil, h
		}
		return nil, nil
	}
	s = &Subscription{hub: h, dir: dir, names: names, sink: sink}
	h.mu.Lock()
	dw := h.dirs[dir]
	dw.subs = append(dw.subs, s)
	h.n++
	h.mu.Unlock()
	return s, nil
}

// Cancel ends the subscription: no change is added to its sink after
// Cancel returns. The last subscription of a directory removes its watch;
// the last of all closes the OS watcher and waits for the hub's
// goroutines, so that nothing of it is left. Cancelling twice is fine.
func (s *Subscription) Cancel() {
	shared.mu.Lock()
	if s.cancelled {
		shared.mu.Unlock()
		return
	}
	s.cancelled = true
	h := s.hub
	h.mu.Lock()
	dw := h.dirs[s.dir]
	for i, o := range dw.subs {
		if o == s {
			dw.subs = append(dw.subs[:i], dw.subs[i+1:]...)
			break
		}
	}
	h.n--
	all := h.n == 0
	h.mu.Unlock()
	if all {
		h.shutdown() // Close drops every watch
	} else {
		h.drop(s.dir)
	}
	shared.mu.Unlock()
	if all {
		<-h.fixed
	}
}

// Live reports whether, as far as the hub knows, the OS watches the
// subscription's directory now. False after the directory was removed or
// moved away, until a directory is back under its path and watched again
// (a Change with Name "" tells either way); true does not prove that no
// event was lost.
func (s *Subscription) Live() bool {
	h := s.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	dw := h.dirs[s.dir]
	return dw != nil && dw.live
}

// wants reports whether an event about the entry name concerns s.
func (s *Subscription) wants(name string) bool {
	if s.names == nil {
		return true
	}
	for _, n := range s.names {
		if n == name {
			return true
		}
	}
	return false
}

// Watched reports how many directories the process's OS watcher watches,
// and whether it exists at all: a diagnostic, for tests.
func Watched() (dirs int, exists bool) {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	h := shared.hub
	if h == nil {
		return 0, false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, dw := range h.dirs {
		if dw.live {
			dirs++
		}
	}
	return dirs, true
}

// Subscriptions reports how many subscriptions the process has of dir: a
// diagnostic, for tests.
func Subscriptions(dir string) int {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return 0
	}
	shared.mu.Lock()
	defer shared.mu.Unlock()
	h := shared.hub
	if h == nil {
		return 0
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if dw := h.dirs[dir]; dw != nil {
		return len(dw.subs)
	}
	return 0
}

func newHub() *hub {
	w, err := newOSWatcher()
	if err != nil {
		return nil
	}
	h := &hub{
		w: w, done: make(chan struct{}), quit: make(chan struct{}),
		fix: make(chan struct{}, 1), fixed: make(chan struct{}),
		dirs: map[string]*dirWatch{}, pending: map[string]struct{}{}, checks: map[string]struct{}{},
	}
	go h.dispatch()
	go h.repairer()
	return h
}

// shutdown detaches h, closes its OS watcher and waits for dispatch. The
// caller holds shared.mu, and waits for h.fixed after releasing it (the
// repairer may be waiting for shared.mu).
func (h *hub) shutdown() {
	shared.hub = nil
	close(h.quit)
	_ = h.w.Close()
	<-h.done
}

// ensure makes sure the OS watches dir (adding it if the hub has no live
// watch of it) and reports whether it does. A directory that was missing
// and is back wakes its subscribers. The caller holds shared.mu.
func (h *hub) ensure(dir string) bool {
	h.mu.Lock()
	dw := h.dirs[dir]
	if dw != nil && dw.live {
		h.mu.Unlock()
		return true
	}
	if dw == nil {
		// In the map before Add, so that dispatch records an event about
		// the directory itself that arrives while Add runs.
		dw = &dirWatch{}
		h.dirs[dir] = dw
	}
	h.mu.Unlock()
	// Add outside h.mu: dispatch takes h.mu for every event, and Add may
	// wait for the backend, which may be sending one.
	err := h.w.Add(dir)
	h.mu.Lock()
	if err == nil {
		dw.live = true
		h.wakeLocked(dir, dw)
	}
	release := err == nil && dw.holdsParent
	if release {
		dw.holdsParent = false
	}
	h.mu.Unlock()
	if release {
		h.unhold(filepath.Dir(dir))
	}
	if err != nil {
		h.forgetIfUnused(dir)
	}
	return err == nil
}

// drop forgets dir if nothing uses it any more: its OS watch is removed,
// and a watch it held on its parent released. The caller holds shared.mu.
func (h *hub) drop(dir string) {
	h.mu.Lock()
	dw := h.dirs[dir]
	if dw == nil || len(dw.subs) > 0 || dw.holds > 0 {
		h.mu.Unlock()
		return
	}
	delete(h.dirs, dir)
	live, held := dw.live, dw.holdsParent
	h.mu.Unlock()
	if live {
		_ = h.w.Remove(dir) // fails if the directory is gone, and with it the watch: nothing to undo
	}
	if held {
		h.unhold(filepath.Dir(dir))
	}
}

// forgetIfUnused deletes dir's entry if nothing uses it and it has no
// watch. The caller holds shared.mu.
func (h *hub) forgetIfUnused(dir string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if dw := h.dirs[dir]; dw != nil && !dw.live && len(dw.subs) == 0 && dw.holds == 0 && !dw.holdsParent {
		delete(h.dirs, dir)
	}
}

// hold keeps a watch on parent while a subdirectory is missing, to see it
// come back; false if the OS gives none. The caller holds shared.mu.
func (h *hub) hold(parent string) bool {
	if !h.ensure(parent) {
		return false
	}
	h.mu.Lock()
	h.dirs[parent].holds++
	h.mu.Unlock()
	return true
}

// unhold releases a hold on parent. The caller holds shared.mu.
func (h *hub) unhold(parent string) {
	h.mu.Lock()
	if dw := h.dirs[parent]; dw != nil && dw.holds > 0 {
		dw.holds--
	}
	h.mu.Unlock()
	h.drop(parent)
}

// repairer sets up again the watches dispatch found dead or doubtful, in
// its own goroutine: dispatch cannot call Add (on Windows, Add waits for the
// goroutine that sends dispatch its events).
func (h *hub) repairer() {
	defer close(h.fixed)
	for {
		select {
		case <-h.quit:
			return
		case <-h.fix:
		}
		shared.mu.Lock()
		if shared.hub != h { // shut down while this waited
			shared.mu.Unlock()
			return
		}
		h.mu.Lock()
		repairs, checks := slices.Collect(maps.Keys(h.pending)), slices.Collect(maps.Keys(h.checks))
		clear(h.pending)
		clear(h.checks)
		h.mu.Unlock()
		for _, dir := range repairs {
			h.repair(dir)
		}
		for _, dir := range checks {
			h.check(dir)
		}
		shared.mu.Unlock()
	}
}

// repair sets the watch of dir up again on whatever directory has its path
// now: the one watched may have been removed, moved away or replaced. If
// none is there, it watches dir's parent for one to appear. Either way the
// subscribers are woken to look. The caller holds shared.mu.
func (h *hub) repair(dir string) {
	h.mu.Lock()
	dw := h.dirs[dir]
	if dw == nil || len(dw.subs) == 0 && dw.holds == 0 {
		h.mu.Unlock()
		return
	}
	dw.live = false
	h.mu.Unlock()
	// Remove first: a watch that followed the directory to another path
	// (a rename; fsnotify drops it itself on Linux) must never report that
	// directory's events under this one.
	_ = h.w.Remove(dir)
	if h.ensure(dir) {
		return
	}
	h.mu.Lock()
	h.wakeLocked(dir, dw)
	need := !dw.holdsParent
	h.mu.Unlock()
	parent := filepath.Dir(dir)
	if !need || parent == dir || !h.hold(parent) {
		return // held already, or no parent to watch: the subscribers' polls decide
	}
	h.mu.Lock()
	dw.holdsParent = true
	h.mu.Unlock()
	// It may have come back between the failed Add and the parent's watch.
	h.ensure(dir)
}

// check makes sure a watch the hub takes for live still watches the
// directory under its path: Add again, which keeps a watch of the same
// directory as it is (no event is missed) and moves it to a directory that
// replaced it. A directory that is gone is repaired, its subscribers
// woken. The caller holds shared.mu.
func (h *hub) check(dir string) {
	h.mu.Lock()
	dw := h.dirs[dir]
	ok := dw != nil && dw.live
	h.mu.Unlock()
	if ok && h.w.Add(dir) != nil {
		h.mu.Lock()
		h.wakeLocked(dir, dw)
		h.mu.Unlock()
		h.repair(dir)
	}
}

// dispatch routes each event to the sinks that want it and schedules
// repairs. It returns when the watcher is closed. An overflow of the OS's
// event queue tells every sink that events were lost and has every watch
// checked. Other watcher errors lose nothing: fsnotify failing to remove a
// watch the kernel had already dropped (EINVAL: a directory moved away,
// then deleted).
func (h *hub) dispatch() {
	defer close(h.done)
	evs, errs := h.w.Events, h.w.Errors
	for evs != nil || errs != nil {
		select {
		case ev, ok := <-evs:
			if !ok {
				evs = nil
				continue
			}
			h.event(ev)
		case err, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				h.overflow()
			}
		}
	}
}

func (h *hub) event(ev fsnotify.Event) {
	dir, name := filepath.Dir(ev.Name), filepath.Base(ev.Name)
	h.mu.Lock()
	defer h.mu.Unlock()
	if dw := h.dirs[dir]; dw != nil {
		c := Change{Dir: dir, Name: name}
		for _, s := range dw.subs {
			if s.wants(name) {
				s.sink.Add(c)
			}
		}
	}
	// The directory itself: removed or moved away (its own event, or its
	// parent's), or created where one is watched or awaited (a new
	// directory under the path, which the old watch does not see).
	if dw := h.dirs[ev.Name]; dw != nil && ev.Op&(fsnotify.Create|fsnotify.Remove|fsnotify.Rename) != 0 {
		if ev.Op&(fsnotify.Remove|fsnotify.Rename) != 0 {
			dw.live = false
		}
		h.wakeLocked(ev.Name, dw)
		h.schedule(ev.Name)
	}
}

// checksAfterLoss: after an overflow the hub checks each live watch with
// an Add, which is harmless only with inotify (it keeps the watch as it
// is); elsewhere (Windows: it restarts the read, losing events) it does
// not.
const checksAfterLoss = runtime.GOOS == "linux"

// overflow tells every sink that events were lost, and has every live
// watch checked: an event that a watch died may be among the lost ones.
func (h *hub) overflow() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for dir, dw := range h.dirs {
		for _, s := range dw.subs {
			s.sink.Lose()
		}
		if dw.live && checksAfterLoss {
			h.checks[dir] = struct{}{}
		}
	}
	h.kick()
}

// schedule has the repairer look at dir. The caller holds h.mu.
func (h *hub) schedule(dir string) {
	h.pending[dir] = struct{}{}
	h.kick()
}

func (h *hub) kick() {
	select {
	case h.fix <- struct{}{}:
	default:
	}
}

// wakeLocked tells dir's subscribers to look at all of it. The caller
// holds h.mu.
func (h *hub) wakeLocked(dir string, dw *dirWatch) {
	for _, s := range dw.subs {
		s.sink.Add(Change{Dir: dir})
	}
}
