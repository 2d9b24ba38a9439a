package fsevents

import "sync"

// Change names what an event was about: an entry of a watched directory,
// or (Name "") the directory itself. Changes say where to look, never what
// is there now: a consumer reads the file system to find out.
type Change struct {
	Dir  string // the watched directory, as Subscribe cleaned it
	Name string // the entry's name; "" for the directory itself
}

// A Sink collects the changes of one consumer's subscriptions, however
// many, and wakes it. It never blocks the hub: changes are kept in a set
// (so a burst of events about one file is one Change) until Take, and the
// wake is a channel of capacity one. A Change Name "" means the directory
// itself was removed, moved away, or its watch was set up again (events
// may have been missed in between): look at everything in it. Lost means
// the OS dropped events (its queue overflowed): look at everything.
//
// The zero Sink is not usable; make one with NewSink. Its methods may be
// called from any goroutine.
type Sink struct {
	ready chan struct{} // holds a token while changes wait

	mu      sync.Mutex
	changes map[Change]struct{}
	lost    bool
}

// NewSink returns an empty Sink.
func NewSink() *Sink { return &Sink{ready: make(chan struct{}, 1)} }

// Ready returns the channel that receives a value when changes wait to be
// taken. A receiver should Take: a value can also be left over from
// changes an earlier Take already returned, in which case Take returns
// none.
func (k *Sink) Ready() <-chan struct{} { return k.ready }

// Take appends the waiting changes to buf, in no particular order, and
// empties the sink. lost reports that events were dropped since the last
// Take, so that the changes returned are not all there were.
func (k *Sink) Take(buf []Change) (changes []Change, lost bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for c := range k.changes {
		buf = append(buf, c)
	}
	clear(k.changes)
	lost, k.lost = k.lost, false
	return buf, lost
}

// Add records c and wakes the consumer, as an event does. It never blocks:
// for a consumer that hands the changes it takes on to others.
func (k *Sink) Add(c Change) {
	k.mu.Lock()
	if k.changes == nil {
		k.changes = make(map[Change]struct{})
	}
	k.changes[c] = struct{}{}
	k.mu.Unlock()
	k.wake()
}

// Lose records that changes were lost, as an overflow of the OS's event
// queue does: the next Take reports lost, and the consumer looks at
// everything. For a consumer that had to drop changes itself, and for
// tests of what a consumer does then.
func (k *Sink) Lose() {
	k.mu.Lock()
	k.lost = true
	k.mu.Unlock()
	k.wake()
}

func (k *Sink) wake() {
	select {
	case k.ready <- struct{}{}:
	default: // a wake is already waiting
	}
}
