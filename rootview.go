package jobstore

import (
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/axqua/jobstore/internal/dirstamp"
	"github.com/axqua/jobstore/internal/fsevents"
)

// rootView is the one view of a jobs root that everything following it in
// one owner shares: a View's StartNext calls (nextCache) and WatchRoot
// channels (rootWatch), a Worker's loop, one plain StartNext call, one
// plain WatchRoot channel. It owns, for the root:
//
//   - its absolute path;
//   - one subscription of each directory a consumer watches (the root,
//     LiveDir, job directories), all into one sink: two consumers that
//     want the same directory share its subscription, which follows the
//     union of the names they want and ends with the last of them;
//   - the listing of the root and the stat of its entries (rootscan.go):
//     a listing is made again only when the root's stamp says it may have
//     changed, whichever consumer asks.
//
// Its goroutine hands each change to every consumer that subscribed to
// its directory (and, for an entry, wants its name), and a loss of events
// to every consumer. end releases everything: no goroutine, subscription
// or descriptor of it remains.
type rootView struct {
	path string // absolute and clean: as changes name the root

	sink *fsevents.Sink // every subscription's; made with the first (sink0)

	mu         sync.Mutex
	dirs       map[string]*viewDir     // the directories subscribed, by path
	consumers  map[*fsevents.Sink]bool // every consumer's sink
	forwarding bool                    // forward runs
	ended      bool                    // end began
	done       chan struct{}           // closed by end
	wg         sync.WaitGroup          // forward, and subscriptions being cancelled

	list rootListing // rootscan.go
}

// viewDir is one directory of a rootView's, subscribed for its consumers.
type viewDir struct {
	sub   *fsevents.Subscription
	names []string                    // what sub follows: the union of wants; nil: every entry
	wants map[*fsevents.Sink][]string // by consumer, the names it wants; nil: every entry
}

// viewSub is one consumer's subscription of one directory of a rootView.
type viewSub struct {
	v   *rootView
	dir string
	k   *fsevents.Sink
}

// newRootView makes the view of root (absolute). Nothing of it runs until
// a consumer subscribes.
func newRootView(root string) *rootView {
	return &rootView{path: filepath.Clean(root), dirs: map[string]*viewDir{}, consumers: map[*fsevents.Sink]bool{},
		done: make(chan struct{})}
}

// consumer returns a new consumer's sink: the changes of the directories
// it subscribes (subscribe) and every loss of events arrive in it. The
// consumer calls leave once done with it.
func (v *rootView) consumer() *fsevents.Sink {
	k := fsevents.NewSink()
	v.mu.Lock()
	defer v.mu.Unlock()
	v.consumers[k] = true
	return k
}

// leave ends every subscription of the consumer k; nothing is added to k
// after leave returns.
func (v *rootView) leave(k *fsevents.Sink) {
	v.mu.Lock()
	defer v.mu.Unlock()
	delete(v.consumers, k)
	for dir, d := range v.dirs {
		if _, ok := d.wants[k]; ok {
			v.dropLocked(dir, d, k)
		}
	}
}

// subscribe makes the changes of dir (absolute and clean) that concern
// names (nil: every entry), and of dir itself, go to the consumer k. It
// returns nil if the OS gives no events for dir now, or the view ended. As
// with fsevents.Subscribe, a change made after it returns reaches k.
func (v *rootView) subscribe(k *fsevents.Sink, dir string, names []string) *viewSub {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.ended {
		return nil
	}
	d := v.dirs[dir]
	if d == nil {
		sub := fsevents.Subscribe(dir, names, v.sink0())
		if sub == nil {
			return nil
		}
		d = &viewDir{sub: sub, names: names, wants: map[*fsevents.Sink][]string{}}
		v.dirs[dir] = d
	} else if union, grew := unionNames(d.names, names); grew {
		// A subscription follows the names it was made with: one that
		// follows the union replaces it, made first so that no change
		// between the two goes unseen.
		sub := fsevents.Subscribe(dir, union, v.sink0())
		if sub == nil {
			return nil
		}
		old := d.sub
		d.sub, d.names = sub, union
		old.Cancel() // at once: the directory keeps its OS watch, which sub holds
	}
	d.wants[k] = names
	if !v.forwarding {
		v.forwarding = true
		v.wg.Go(v.forward)
	}
	return &viewSub{v: v, dir: dir, k: k}
}

// sink0 is the view's sink, made with its first subscription. The caller
// holds v.mu.
func (v *rootView) sink0() *fsevents.Sink {
	if v.sink == nil {
		v.sink = fsevents.NewSink()
	}
	return v.sink
}

// unionNames returns the names a subscription follows for consumers that
// want have and add (nil: every entry), and whether it is more than have.
func unionNames(have, add []string) ([]string, bool) {
	if have == nil {
		return nil, false
	}
	if add == nil {
		return nil, true
	}
	union := have
	for _, n := range add {
		if !slices.Contains(union, n) {
			union = append(slices.Clip(union), n)
		}
	}
	return union, len(union) > len(have)
}

// Live reports whether, as far as the OS watcher knows, it watches the
// subscription's directory now (fsevents.Subscription.Live).
func (s *viewSub) Live() bool {
	s.v.mu.Lock()
	var sub *fsevents.Subscription
	if d := s.v.dirs[s.dir]; d != nil {
		sub = d.sub
	}
	s.v.mu.Unlock()
	return sub != nil && sub.Live()
}

// Cancel ends the subscription: no change of its directory is added to its
// consumer's sink after Cancel returns. The last of a directory's ends its
// OS subscription, in the background (removing an OS watch waits); end
// waits for it. Cancelling twice is fine.
func (s *viewSub) Cancel() {
	v := s.v
	v.mu.Lock()
	defer v.mu.Unlock()
	if d := v.dirs[s.dir]; d != nil {
		if _, ok := d.wants[s.k]; ok {
			v.dropLocked(s.dir, d, s.k)
		}
	}
}

// dropLocked ends k's part of d, and d with its last. The caller holds v.mu.
func (v *rootView) dropLocked(dir string, d *viewDir, k *fsevents.Sink) {
	delete(d.wants, k)
	if len(d.wants) > 0 {
		return // the union is left as it is: the names no one wants now are filtered out
	}
	delete(v.dirs, dir)
	if v.ended {
		d.sub.Cancel()
		return
	}
	v.wg.Go(d.sub.Cancel)
}

// forward hands the view's changes to the consumers that want them, and a
// loss of events to every consumer, until end. A loss, or a change of the
// root itself (removed, or watched again: events may have been missed),
// also makes the next listing of the root read it again.
func (v *rootView) forward() {
	var buf []fsevents.Change
	for {
		select {
		case <-v.sink.Ready():
		case <-v.done:
			return
		}
		changes, lost := v.sink.Take(buf[:0])
		// Before any consumer is told: the listing it then asks for is made
		// after the loss.
		if lost || slices.Contains(changes, fsevents.Change{Dir: v.path}) {
			v.list.unsure()
		}
		v.mu.Lock()
		if lost {
			for k := range v.consumers {
				k.Lose()
			}
		}
		for _, c := range changes {
			d := v.dirs[c.Dir]
			if d == nil {
				continue
			}
			for k, names := range d.wants {
				if c.Name == "" || names == nil || slices.Contains(names, c.Name) {
					k.Add(c)
				}
			}
		}
		v.mu.Unlock()
		buf = changes
	}
}

// open opens the root for a round of stats and a listing (v.list). The
// caller closes it at the end of the round: a descriptor held for good
// would keep a removed root's inode alive (and its watch silent) and its
// filesystem from being unmounted.
func (v *rootView) open() (*dirstamp.Dir, error) { return dirstamp.Open(v.path) }

// rootRound is one consumer's access to the root's listing and the stat
// of its entries: through one descriptor of the root for a round (enter),
// or one each outside a round.
type rootRound struct {
	v *rootView
	d *dirstamp.Dir // during a round
}

// enter opens the root for a round of stats and listing, unless a round
// is under way, and returns the function that ends the round it began;
// if the root cannot be opened, each stat or listing tries for itself.
func (r *rootRound) enter() (leave func()) {
	if r.d != nil {
		return func() {}
	}
	d, err := r.v.open()
	if err != nil {
		return func() {}
	}
	r.d = d
	return func() {
		_ = d.Close()
		r.d = nil
	}
}

// dir returns the round's descriptor, or one opened for the caller alone,
// with the function that closes what dir opened.
func (r *rootRound) dir() (*dirstamp.Dir, func(), error) {
	if r.d != nil {
		return r.d, func() {}, nil
	}
	d, err := r.v.open()
	if err != nil {
		return nil, nil, err
	}
	return d, func() { _ = d.Close() }, nil
}

// stat is an lstat of the root's entry name, relative to a descriptor of
// the root, never following a link.
func (r *rootRound) stat(name string) (entryStat, error) {
	d, done, err := r.dir()
	if err != nil {
		return entryStat{}, err
	}
	defer done()
	st, typ, err := d.LstatEntry(name)
	return entryStat{stamp: st, typ: typ}, err
}

// entries is the view's listing of the root at now (rootListing.entries).
func (r *rootRound) entries(now time.Time) ([]dirstamp.Entry, uint64, error) {
	d, done, err := r.dir()
	if err != nil {
		return nil, 0, err
	}
	defer done()
	return r.v.list.entries(d, now)
}

// listedSince is rootListing.listedSince, for the root as the round has
// it open (as if it could not be opened outside a round).
func (r *rootRound) listedSince(gen uint64) bool { return r.v.list.listedSince(r.d, gen) }

// end ends every subscription and the view's goroutine, and returns once
// they have. Its owner calls it once no consumer uses v.
func (v *rootView) end() {
	v.mu.Lock()
	if v.ended {
		v.mu.Unlock()
		return
	}
	v.ended = true
	close(v.done)
	v.mu.Unlock()
	v.wg.Wait() // forward, and the subscriptions being cancelled
	v.mu.Lock()
	defer v.mu.Unlock()
	for dir, d := range v.dirs {
		d.sub.Cancel()
		delete(v.dirs, dir)
	}
	clear(v.consumers)
}
