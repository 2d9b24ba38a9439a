package jobstore

import (
	"errors"
	"io/fs"
	"path/filepath"
	"sync"
	"time"

	"github.com/axqua/jobstore/internal/dirstamp"
)

// dueLead is how long before a job's due time (not_before, retry_at) a
// waiting StartNext or Worker wakes and looks: a look takes a job due
// within dueLead, which is then started at its due time (waitDue), not
// after a look begun at it. A timer of an idle Go process on Linux fires
// up to a millisecond late (epoll waits in whole milliseconds), and a look
// takes a fraction of one.
const dueLead = 2 * time.Millisecond

// nextReport is an error to hand to WithSkipped's function.
type nextReport struct {
	dir JobDir
	err error
}

// nextCache is a view of one root: what its owner (a Worker, a View, or
// one StartNext call) knows of the jobs under it, its watch and its full
// scan, a consumer of the owner's rootView (whose subscriptions and
// listing it shares with a View's WatchRoot channels). Several StartNext
// calls may use it at once; its owner closes it.
type nextCache struct {
	root     string
	view     *rootView // its watch and its scan's listing, shared with a View's WatchRoot
	ownsView bool      // close ends view

	looking sync.Mutex // one look (or rescue pass's refresh, or follow) at a time: they alone change the entries' records

	mu         sync.Mutex // guards c.entries, c.queue, the sets of entries, c.wake, c.events, c.scan, and an entry's taking
	live       cleanStamp // of LiveDir when its names were last read whole (these three: c.looking's)
	liveReadAt time.Time
	liveHeard  bool                  // LiveDir's events were watched at the last look
	entries    map[string]*nextEntry // the live jobs: LiveDir's entries, and those a scan indexed
	queue      nextQueue             // the entries queued and not being started, in start order
	watched    map[*nextEntry]bool   // the entries neither queued nor taken: each look brings them up to date
	scan       *fullScan             // nil until the first look
	repairs    time.Duration         // RepairInterval; tests shorten it
	incomplete map[*nextEntry]bool   // the entries in stateIncomplete, for follow
	running    map[*nextEntry]bool   // the entries in stateRunning, for a rescue pass
	wake       time.Time             // when the earliest job not due at the last take is due
	events     *nextEvents           // nil until a StartNext waits; ended by close
	reads      int                   // job directories read, for tests

	// firstLookAlone: the first look begins no watch and no full scan;
	// set by a plain StartNext call that may wait, whose view ends with
	// it: a call that starts a job at its first look pays for neither.
	// One that finds nothing then watches and looks again (endLookAlone).
	firstLookAlone bool
	stats          int // stats of job directories and job.json files, for tests

	// Tests only: this host's clock and the stat of a job directory, to
	// stand for a filesystem with coarse timestamps. nil: time.Now and
	// dirstamp.Dir.Lstat.
	clock func() time.Time
	stat  func(d *dirstamp.Dir, name string) (dirstamp.Stamp, error)
}

func (c *nextCache) now() time.Time {
	if c.clock != nil {
		return c.clock()
	}
	return time.Now()
}

func (c *nextCache) lstat(d *dirstamp.Dir, name string) (dirstamp.Stamp, error) {
	c.stats++
	return c.statUncounted(d, name)
}

// statUncounted is lstat without the count: a take calls it without c.mu.
func (c *nextCache) statUncounted(d *dirstamp.Dir, name string) (dirstamp.Stamp, error) {
	if c.stat != nil {
		return c.stat(d, name)
	}
	return d.Lstat(name)
}

func (c *nextCache) fileStamp(d *dirstamp.Dir, rel string) (dirstamp.Stamp, error) {
	c.stats++
	return d.FileStamp(rel)
}

// wakeAt is when the earliest job that was not yet due at the last look
// becomes due (zero: none).
func (c *nextCache) wakeAt() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.wake
}

// update brings e up to date at a look, and retires its LiveDir entry
// and forgets it once it is seen ended or gone. The caller holds
// c.looking.
func (c *nextCache) update(d *dirstamp.Dir, e *nextEntry, now time.Time, reports []nextReport) []nextReport {
	e.retryDue(now)
	// A running job is read again at a look only when its directory's
	// stamp changed; a change the stamp missed (not yet clean) waits for
	// the rescue pass's refresh, every scan interval: its end removes its
	// LiveDir entry, which the look hears of anyway.
	reports = c.refresh(d, e, e.state != stateRunning, reports)
	if e.state == stateSettled || e.gone {
		retire(JobDir(filepath.Join(c.root, e.name)))
		c.forget(e)
		return reports
	}
	c.note(e)
	return reports
}

// forget drops e from c: its job is no longer live, or its name left
// LiveDir. The caller holds c.looking.
func (c *nextCache) forget(e *nextEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries[e.name] == e {
		delete(c.entries, e.name)
	}
	c.noteState(e)
}

// refresh stats e's directory and reads its records if the stamp says they
// may have changed: if it differs, or (strict) is not yet clean
// (cleanStamp). The caller holds c.looking, and e is no entry being taken: only a look changes it. The
// caller notes e's new state (note, forget or hold) once it has read it:
// from then on a take may take e.
func (c *nextCache) refresh(d *dirstamp.Dir, e *nextEntry, strict bool, reports []nextReport) []nextReport {
	st, err := c.lstat(d, e.name)
	e.gone = errors.Is(err, fs.ErrNotExist)
	if err != nil {
		// Removed (the look retires its entry), or not a directory:
		// neither is a job; a directory that appears under the name
		// later is read then.
		e.state, e.seen = stateUnknown, cleanStamp{}
		return reports
	}
	if e.state == stateBroken && !e.retryAt.IsZero() && st.SameDir(e.seen.stamp) {
		return reports // its Start failed: left until retryAt
	}
	// An equal stamp is not enough for a directory made again under the
	// same name (inodes are reused), but such a one has its own times,
	// unless it was made in the tick of the last read: then the stamp is
	// not yet clean (cleanStamp).
	if e.state != stateUnknown && st == e.seen.stamp && (!strict || e.seen.clean) {
		return reports
	}
	specRel := filepath.Join(e.name, SpecFile)
	if !st.SameDir(e.seen.stamp) {
		e.kind = "" // another directory under the name: another job, until read
	}
	e.readAt = c.now()
	e.seen.look(st, e.readAt)
	e.spec, _ = c.fileStamp(d, specRel) // before the read: a job.json made after it differs
	c.reads++
	dir := JobDir(filepath.Join(c.root, e.name))
	if err := e.read(dir); err != nil {
		e.state = stateBroken
		if text := err.Error(); text != e.errText {
			e.errText = text
			reports = append(reports, nextReport{dir, err})
		}
		return reports
	}
	e.errText = ""
	return reports
}

// note is noteState for a caller that does not hold c.mu.
func (c *nextCache) note(e *nextEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.noteState(e)
}

// noteState keeps c.queue, c.watched, c.incomplete and c.running true of
// e, whose state may have changed or which c may have forgotten (then it
// is in none). The caller holds c.mu.
func (c *nextCache) noteState(e *nextEntry) {
	held := c.entries[e.name] == e
	c.incomplete = noteIn(c.incomplete, e, held && e.state == stateIncomplete)
	c.running = noteIn(c.running, e, held && !e.taking && e.state == stateRunning)
	c.watched = noteIn(c.watched, e, held && !e.taking && e.state != stateQueued)
	c.queue.remove(e) // and put back: its due time or kind may have changed
	if held && !e.taking && e.state == stateQueued {
		c.queue.put(e)
	}
}

// noteIn makes e a member of set, or not, and returns set.
func noteIn(set map[*nextEntry]bool, e *nextEntry, member bool) map[*nextEntry]bool {
	switch {
	case member && !set[e]:
		if set == nil {
			set = map[*nextEntry]bool{}
		}
		set[e] = true
	case !member && set[e]:
		delete(set, e)
	}
	return set
}

// takeBest takes the best queued job of kinds due within dueLead off
// c.queue, for the caller to start, and returns it with its due time as
// the look saw it; nil when there is none (c.wake is then when the
// soonest one not yet due is due).
func (c *nextCache) takeBest(kinds []string) (*nextEntry, time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.queue.best(kinds, time.Now().Add(dueLead))
	if e == nil {
		c.wake = c.queue.wake(kinds)
		return nil, time.Time{}
	}
	e.taking = true
	c.noteState(e)
	return e, e.due
}

// current reports whether e, taken by the caller, may be started as the
// look that began at began (c's clock), or an earlier one, read it: read
// by that look, or its directory's stamp unchanged since. A stamp that is
// not yet clean (cleanStamp) may hide a change made within its tick: that
// is left to Start, which reads the job's records again once it holds
// job.lock and refuses a job that is not queued, not due, or (startOptions.picked)
// not of the kinds StartNext takes. Such a change can only
// make this take start a job before one a later look would order first.
// A stat at most, without c.mu: no look touches an entry being taken.
func (c *nextCache) current(d *dirstamp.Dir, e *nextEntry, began time.Time) bool {
	if !e.readAt.Before(began) {
		return true
	}
	st, err := c.statUncounted(d, e.name)
	return err == nil && e.seen.holds(st)
}

// started records that e's Start succeeded: e stays taken while run
// lives, running, so that no look or rescue pass stats or reads it (this
// process writes its records, and its Finish retires its LiveDir entry).
// run's Close hands it back (released).
func (c *nextCache) started(e *nextEntry, run *Run) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e.state = stateRunning
	c.noteState(e)
	run.closed = func() { c.released(e) }
}

// released hands back e, taken by a Run that is now closed: it is read
// again at the next look (its job may be queued again, or still running if
// the Run was closed without Finish), unless that look forgets it first,
// its LiveDir entry gone (the job ended).
func (c *nextCache) released(e *nextEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e.taking, e.state = false, stateUnknown
	c.noteState(e)
}

// settle records what Start's err says of e, a job whose Start failed: to be read
// again (passed over: another runner won it, it has a cancel request, it
// ended or is gone, or it was not current), or failed on its own (left for
// nextRetry).
func (c *nextCache) settle(e *nextEntry, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e.taking = false
	switch passed := passedOver(err); {
	case passed, errors.Is(err, errNotCurrent):
		e.state = stateUnknown
	default:
		e.state, e.retryAt, e.errText = stateBroken, c.now().Add(nextRetry), err.Error()
	}
	c.noteState(e)
}

// watch returns a channel that is closed at the next file system event of
// root, of its LiveDir, or of an incomplete job directory followed; nil
// when the OS gives no events for root (the scan alone then).
func (c *nextCache) watch() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.events == nil {
		c.events = newNextEvents(c.view)
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
	c.looking.Lock() // the entries' states are a look's
	defer c.looking.Unlock()
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

// repairInterval is c's RepairInterval.
func (c *nextCache) repairInterval() time.Duration {
	if c.repairs > 0 {
		return c.repairs
	}
	return RepairInterval
}
