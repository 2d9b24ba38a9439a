package jobstore

import (
	"io/fs"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/axqua/jobstore/internal/dirstamp"
)

// The root scan: a jobs root listed again only when it changed, one
// listing for every consumer of its rootView (rootListing), the stat of an
// entry relative to a descriptor of the root (entryStat), which of its
// entries are jobs (isJobEntry), and the package's one racily clean rule
// (cleanStamp), by which StartNext's views and WatchRoot alike decide that a
// directory whose stamp did not move needs no read.

// cleanStamp is a directory's stamp as of the last read of what it holds,
// and whether that read surely saw every change the stamp does not show.
//
// A filesystem stamps a directory's times from a clock that ticks, so a
// change within the tick of an earlier one leaves the stamp as it was
// ("racily clean", as git calls it). The rule needs no clock but this
// host's monotonic one, and so holds on a shared filesystem whose server
// clock is off this host's by any amount: a stamp is clean once a read
// was made after a stat that found it unchanged a whole tick
// (dirstamp.Tick) after it was first seen. That tick has then ended (the
// stamp was set before it was first seen), and a change after that read
// moves the stamp. Until then the directory is read again at every look:
// a directory new to a view is read at least twice, the second time at its
// first look a tick or more later (look), or only that one more time
// (lookLate). The zero cleanStamp has seen nothing.
type cleanStamp struct {
	stamp dirstamp.Stamp
	first time.Time // when stamp was first seen, on this host's monotonic clock; zero: never
	clean bool
}

// look records a stat of the directory (st, taken at now, a time.Now with
// its monotonic reading) and reports whether its files must be read: st
// differs from the stamp, or is the same and not yet clean. The caller
// reads after look returns true. It suits a caller that looks when told
// of a change (StartNext's views): a change within the tick is read at the
// look it causes.
func (s *cleanStamp) look(st dirstamp.Stamp, now time.Time) bool {
	if s.renew(st, now) {
		return true
	}
	if s.clean {
		return false
	}
	s.clean = tickOver(st, s.first, now)
	return true
}

// lookLate is look for a caller that looks again by itself (a poll): a
// stamp that is the same and not yet clean is read again once, at the
// first look after its tick, which makes it clean.
func (s *cleanStamp) lookLate(st dirstamp.Stamp, now time.Time) bool {
	if s.renew(st, now) {
		return true
	}
	if s.clean || !tickOver(st, s.first, now) {
		return false
	}
	s.clean = true
	return true
}

// tickOver reports whether a stat at now that finds st, first seen at
// first, comes after st's tick surely ended: a read after it sees every
// change st does not show. It is the rule of cleanStamp, for a caller that
// keeps no cleanStamp (a full scan's ended jobs).
func tickOver(st dirstamp.Stamp, first, now time.Time) bool {
	return now.Sub(first) >= dirstamp.Tick(st.Mtime)
}

// renew starts s over at st, first seen at now, unless s already stamps st.
func (s *cleanStamp) renew(st dirstamp.Stamp, now time.Time) bool {
	if s.holds(st) {
		return false
	}
	*s = cleanStamp{stamp: st, first: now}
	return true
}

// unchanged reports whether st, a stat taken after the last read, says
// that nothing changed since that read: it equals a clean stamp.
func (s *cleanStamp) unchanged(st dirstamp.Stamp) bool {
	return s.clean && s.holds(st)
}

// holds reports whether s has seen a stamp and it is st, clean or not.
func (s *cleanStamp) holds(st dirstamp.Stamp) bool {
	return !s.first.IsZero() && st == s.stamp
}

// rootListing is a rootView's listing of its root, made again only when
// the root's stamp says it may have changed (cleanStamp, as a poll looks:
// lookLate), or events of the root were lost: whichever consumer asks
// first lists, and the others are handed that listing. A consumer knows a
// listing it has not seen by its generation.
//
// A listing handed on may be older than the caller: it holds every entry
// made or removed before the stat that preceded it, and those made after
// it unless within the stamp's tick, which a later listing finds (the
// stamp is not clean until one is made a tick later). A caller that drops
// a job because a listing lacks it checks first that it is gone.
type rootListing struct {
	mu     sync.Mutex
	stamp  cleanStamp // of the root, as of the listing
	listed bool
	jobs   []dirstamp.Entry // its job entries, in name order: shared, never modified
	gen    uint64           // counts the listings made
	lost   bool             // events were lost: list again, unless the stamp is clean

	calls, listings int              // tests: calls of entries, and listings made
	clock           func() time.Time // tests only: the stamps' clock; nil: the caller's
}

// unsure makes the next entries read the root again unless its stamp is
// clean and unchanged: events that would have told of a change were lost.
func (l *rootListing) unsure() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lost = true
}

// entries returns the job entries (isJobEntry) of the root d, which
// rootView.open opened, in name order, and the listing's generation: the
// last listing, unless the root's stamp at now (this host's monotonic
// clock) says it may have changed since. The entries are shared: the
// caller must not modify them.
func (l *rootListing) entries(d *dirstamp.Dir, now time.Time) ([]dirstamp.Entry, uint64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls++
	if l.clock != nil {
		now = l.clock()
	}
	st, err := d.Stamp()
	if err != nil {
		l.stamp, l.listed = cleanStamp{}, false
		return nil, 0, err
	}
	if l.lost && !l.stamp.unchanged(st) {
		l.stamp = cleanStamp{}
	}
	l.lost = false
	if !l.stamp.lookLate(st, now) && l.listed {
		return l.jobs, l.gen, nil
	}
	all, err := d.Entries()
	if err != nil {
		l.stamp, l.listed = cleanStamp{}, false
		return nil, 0, err
	}
	jobs := make([]dirstamp.Entry, 0, len(all))
	for _, e := range all {
		if isJobEntry(e.Name, e.Type) {
			jobs = append(jobs, e)
		}
	}
	slices.SortFunc(jobs, func(a, b dirstamp.Entry) int { return strings.Compare(a.Name, b.Name) })
	l.jobs, l.listed = jobs, true
	l.gen++
	l.listings++
	return jobs, l.gen, nil
}

// listedSince reports whether the root was listed since the listing of
// generation gen, or may have to be: events were lost, or the root's path
// no longer names the directory listed (removed, or replaced). d is the
// root as rootView.open opened it, nil if it could not be.
func (l *rootListing) listedSince(d *dirstamp.Dir, gen uint64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.listed || l.gen != gen || l.lost || d == nil {
		return true
	}
	st, err := d.Stamp()
	return err != nil || !st.SameDir(l.stamp.stamp)
}

// counts returns how many listings of the root l made, and how many times
// a consumer asked for one: for tests.
func (l *rootListing) counts() (made, asked int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.listings, l.calls
}

// entryStat is an lstat of a root entry (rootView.open's
// dirstamp.Dir.LstatEntry): its stamp, and its type (a link is never
// followed).
type entryStat struct {
	stamp dirstamp.Stamp
	typ   fs.FileMode
}

// isJobEntry reports whether a root entry stands for a job: a directory
// or a symbolic link (reported, never followed) whose name is not a
// dot-name nor index.json.
func isJobEntry(name string, typ fs.FileMode) bool {
	return isJobName(name) && (typ.IsDir() || typ&fs.ModeSymlink != 0)
}

// mtimeStamp is what a stamp says portably of a directory: its
// modification time.
func mtimeStamp(st dirstamp.Stamp) dirstamp.Stamp { return dirstamp.Stamp{Mtime: st.Mtime} }
