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

// nextEvents is what StartNext and the Worker watch of a root, as a
// consumer of its rootView: the root itself (every entry), its LiveDir and
// the incomplete job directories followed, all into one sink. Every event closes the channel
// next returned, waking every waiting call; the names of the root's entries
// that changed are kept for the next look (takeHints), which reads those
// alone rather than the whole root.
type nextEvents struct {
	view     *rootView
	sink     *fsevents.Sink      // this consumer's, of view
	rootPath string              // as the sink's changes name it
	livePath string              // LiveDir's, likewise
	root     *viewSub            // nil: no events here
	live     *viewSub            // nil: none yet (LiveDir missing) or no events
	dirs     map[string]*viewSub // nil value: the OS gave none (not tried again)

	mu      sync.Mutex
	changed chan struct{}
	hints   map[string]struct{} // names of root's entries that changed since takeHints
	lives   map[string]struct{} // names of LiveDir's entries that changed since takeHints
	full    bool                // events were lost: the next look scans the root
	allLive bool                // LiveDir's events were lost: the next look reads it whole
	done    chan struct{}       // closed by stop
	wg      sync.WaitGroup
}

func newNextEvents(v *rootView) *nextEvents {
	ev := &nextEvents{view: v, sink: v.consumer(), rootPath: v.path, livePath: filepath.Join(v.path, LiveDir), dirs: map[string]*viewSub{},
		changed: make(chan struct{}), hints: map[string]struct{}{}, lives: map[string]struct{}{}, done: make(chan struct{}),
		full: true} // what changed before the watch is unknown
	if ev.root = v.subscribe(ev.sink, ev.rootPath, nil); ev.root != nil {
		ev.wg.Go(ev.forward)
	}
	return ev
}

// watchLive subscribes to LiveDir unless it is subscribed already or root
// gives no events; a LiveDir still missing is tried again at the next call.
func (ev *nextEvents) watchLive() {
	if ev.root != nil && ev.live == nil {
		ev.live = ev.view.subscribe(ev.sink, ev.livePath, nil)
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

// takeHints returns the names of the root's entries and of LiveDir's that
// changed since the last call, full if the root's events may have been
// missed (the look then scans the whole root) and allLive if LiveDir's may
// have been (the look reads it whole). A nil ev (no watch) has none.
func (ev *nextEvents) takeHints() (names, lives []string, full, allLive bool) {
	if ev == nil {
		return nil, nil, false, false
	}
	ev.mu.Lock()
	defer ev.mu.Unlock()
	for name := range ev.hints {
		names = append(names, name)
	}
	for name := range ev.lives {
		lives = append(lives, name)
	}
	clear(ev.hints)
	clear(ev.lives)
	full, ev.full = ev.full, false
	allLive, ev.allLive = ev.allLive, false
	return names, lives, full, allLive
}

// hearsLive reports whether ev watches LiveDir: its changes on this host
// are then named by takeHints. A nil ev does not.
func (ev *nextEvents) hearsLive() bool { return ev != nil && ev.live != nil }

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
			ev.allLive = ev.allLive || lost
			for _, ch := range changes {
				hints, full := ev.hints, &ev.full
				switch ch.Dir {
				case ev.rootPath:
				case ev.livePath:
					hints, full = ev.lives, &ev.allLive
				default:
					continue
				}
				if ch.Name == "" || len(hints) >= maxHints {
					*full = true
					continue
				}
				hints[ch.Name] = struct{}{}
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
	sub := ev.view.subscribe(ev.sink, dir, []string{StatusFile})
	ev.dirs[dir] = sub
	return sub != nil
}

// unfollow ends the watch of dir. The view removes the OS watch in the
// background, as removing one waits (an inotify watch's removal waits for
// an RCU grace period, milliseconds).
func (ev *nextEvents) unfollow(dir string) {
	sub := ev.dirs[dir]
	delete(ev.dirs, dir)
	if sub != nil {
		sub.Cancel()
	}
}

// stop ends every watch of ev and its forwarding goroutine, and returns
// once that has ended; the view ends what it shared.
func (ev *nextEvents) stop() {
	close(ev.done)
	ev.wg.Wait()
	ev.view.leave(ev.sink)
}
