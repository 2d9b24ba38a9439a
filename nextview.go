package jobstore

import (
	"cmp"
	"errors"
	"io/fs"
	"iter"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/axqua/jobstore/internal/dirstamp"
	"github.com/axqua/jobstore/internal/fsys"
)

// nextRetry is how long StartNext leaves a job whose Start failed with an
// error of its own (a record it cannot read, a write that failed) before it
// tries it again.
const nextRetry = time.Minute

// passedOver reports whether a failed Start passed the job over without a
// failure of the job's own, and the state that leaves it in: settled for a
// cancel request or a terminal state (it never becomes startable again),
// unknown (to be read again) for a race lost to another runner or claim or
// a directory removed meanwhile.
func passedOver(err error) (nextState, bool) {
	switch {
	case errors.Is(err, ErrCancelRequested), errors.Is(err, ErrWrongState):
		return stateSettled, true
	case errors.Is(err, ErrLocked), errors.Is(err, ErrNotOwner), errors.Is(err, fs.ErrNotExist), errors.Is(err, ErrNotDue):
		return stateUnknown, true
	}
	return stateUnknown, false
}

// nextState is what StartNext knows of a job directory.
type nextState int

const (
	stateUnknown    nextState = iota // not read, or to be read again
	stateQueued                      // status queued, no cancel request: a candidate
	stateCancelling                  // status queued with cancel.json: never started
	stateIncomplete                  // no job.json or no status.json yet
	stateBroken                      // a record unreadable, or Start failed on its own
	stateRunning                     // running: queued again if its attempt fails with attempts left, or its runner is gone
	stateSettled                     // ended: queued again only by Retry, which changes the root
)

// nextEntry is one job directory as StartNext last read it.
type nextEntry struct {
	name        string
	stamp       dirstamp.Stamp // of the directory, taken before its records were read
	spec        dirstamp.Stamp // of its job.json, taken before the read (zero: none)
	readAt      time.Time      // when they were read (this host's clock)
	state       nextState
	kind        string // from its job.json; "" until one was read
	submittedAt time.Time
	priority    int
	due         time.Time // queued: not started before (not_before, retry_at); zero: at once
	errText     string    // the last error reported for it
	retryAt     time.Time // stateBroken after a failed Start: not tried before
	taking      bool      // a StartNext of this process is starting it
	gone        bool      // no directory under the name at the last look
}

// retryDue makes e, a job whose failed Start is due to be tried again at
// now, one to read again.
func (e *nextEntry) retryDue(now time.Time) {
	if e.state == stateBroken && !e.retryAt.IsZero() && !now.Before(e.retryAt) {
		e.state, e.retryAt = stateUnknown, time.Time{}
	}
}

// nextActive is what a look with root unchanged may have to bring up to
// date: the entries that were not settled (running or ended) when root was
// last read, by the kind of their job ("" while it is not known). A job
// settled since stays listed until root changes (its state skips it); a
// job's kind, once known, is its kind for good.
type nextActive map[string][]*nextEntry

// newNextActive is the nextActive of entries.
func newNextActive(entries map[string]*nextEntry) nextActive {
	a := nextActive{}
	for _, e := range entries {
		if e.state != stateSettled {
			a[e.kind] = append(a[e.kind], e)
		}
	}
	return a
}

// of yields the entries a call that takes kinds (empty: every kind) looks
// at: those of these kinds and those of no known kind, each once.
func (a nextActive) of(kinds []string) iter.Seq[*nextEntry] {
	return func(yield func(*nextEntry) bool) {
		for k, es := range a {
			if len(kinds) > 0 && k != "" {
				continue // the kinds asked for, below, in their order
			}
			for _, e := range es {
				if !yield(e) {
					return
				}
			}
		}
		for i, k := range kinds {
			if slices.Contains(kinds[:i], k) {
				continue
			}
			for _, e := range a[k] {
				if !yield(e) {
					return
				}
			}
		}
	}
}

// dueLead is how long before a job's due time (not_before, retry_at) a
// waiting StartNext or Worker wakes and looks: a look takes a job due
// within dueLead, which is then started at its due time (waitDue), not
// after a look begun at it. A timer of an idle Go process on Linux fires
// up to a millisecond late (epoll waits in whole milliseconds), and a look
// takes a fraction of one.
const dueLead = 2 * time.Millisecond

// appendIfCandidate appends e to cands if a call that takes kinds may
// start it by wall (this host's clock); a job of those kinds that is not
// due by then moves c.wake to its due time, if that is sooner. The caller
// holds c.mu.
func (c *nextCache) appendIfCandidate(cands []*nextEntry, e *nextEntry, kinds []string, wall time.Time) []*nextEntry {
	if e.state != stateQueued || e.taking || (len(kinds) > 0 && !slices.Contains(kinds, e.kind)) {
		return cands
	}
	if e.due.After(wall) {
		if c.wake.IsZero() || e.due.Before(c.wake) {
			c.wake = e.due // the earliest job not yet due: a waiting call wakes then
		}
		return cands
	}
	return append(cands, e)
}

// nextReport is an error to hand to WithSkipped's function.
type nextReport struct {
	dir JobDir
	err error
}

// nextCache is what the StartNext calls of this process know of one root.
type nextCache struct {
	root string

	mu         sync.Mutex     // one look at a time; guards the fields below
	liveStamp  dirstamp.Stamp // of LiveDir when it was last read
	liveReadAt time.Time
	liveRead   bool
	entries    map[string]*nextEntry // the live jobs: LiveDir's entries, and those a scan indexed
	active     nextActive            // since LiveDir was last read (see look)
	scan       *fullScan             // nil until the first look
	repairs    time.Duration         // RepairInterval; tests shorten it
	incomplete map[*nextEntry]bool   // the entries in stateIncomplete, for follow
	running    map[*nextEntry]bool   // the entries in stateRunning, for a rescue pass
	users      int                   // StartNext calls in progress
	idle       *time.Timer           // drops the cache once nobody used it for nextCacheIdle
	wake       time.Time             // when the earliest job not due at the last look is due
	lastUse    time.Time             // when the last StartNext call on it returned
	events     *nextEvents           // nil until a StartNext waits; dropped with the cache
	reads      int                   // job directories read, for tests
	stats      int                   // stats of job directories and job.json files, for tests

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
	if c.stat != nil {
		return c.stat(d, name)
	}
	return d.Lstat(name)
}

func (c *nextCache) fileStamp(d *dirstamp.Dir, rel string) (dirstamp.Stamp, error) {
	c.stats++
	return d.FileStamp(rel)
}

// look brings the cache up to date with root and returns the candidates,
// best first, and the errors to report.
//
// What it reads grows with the live jobs, not with the root: LiveDir when
// its stamp changed, then a stat of each live job of kinds (and a read of
// those whose directory changed), and the directories the root's events
// named. The whole root is read only by a full scan (fullScan), which a
// look begins on its own goroutine (the first look, then every
// RepairInterval, or when the root's events were lost) and never waits
// for; the live jobs without an entry it found join at a later look.
func (c *nextCache) look(kinds []string) ([]*nextEntry, []nextReport, error) {
	const op = "start next"
	c.mu.Lock()
	defer c.mu.Unlock()
	d, err := dirstamp.Open(c.root)
	if err != nil {
		return nil, nil, rootError(op, c.root, err)
	}
	defer d.Close()
	now := c.now()
	var reports []nextReport
	changed := c.readLive(now)
	names, full := c.events.takeHints()
	if c.scan == nil {
		c.scan = newFullScan(c.root)
	}
	if c.scan.startIfDue(now, c.repairInterval(), full, c.liveNames) {
		changed = true // and once a scan interval, every live job is stated
	}
	names = append(names, c.scan.takeFound()...)
	if len(names) > 0 {
		var added bool
		reports, added = c.indexNames(d, names, reports)
		changed = changed || added
	}
	var cands []*nextEntry
	c.wake = time.Time{}
	wall := time.Now().Add(dueLead) // a job due within dueLead is taken, and started at its due time
	if changed {
		// Every live job is looked at: one may have been replaced under
		// its name (a job of another kind, now).
		for _, e := range c.entries {
			reports = c.update(d, e, now, true, reports)
		}
		c.active = newNextActive(c.entries)
		for _, e := range c.entries {
			cands = c.appendIfCandidate(cands, e, kinds, wall)
		}
	} else {
		// Only the jobs that may still become startable by this call are
		// looked at, c.active's of kinds. A job known to be of another
		// kind is not even stated: its kind comes from its job.json,
		// which is written once, and a directory made again under its
		// name changes LiveDir (or is named by the root's events).
		for e := range c.active.of(kinds) {
			reports = c.update(d, e, now, false, reports)
			cands = c.appendIfCandidate(cands, e, kinds, wall)
		}
	}
	slices.SortFunc(cands, func(a, b *nextEntry) int {
		if c := cmp.Compare(b.priority, a.priority); c != 0 {
			return c // higher first
		}
		if c := a.submittedAt.Compare(b.submittedAt); c != 0 {
			return c
		}
		return cmp.Compare(a.name, b.name)
	})
	return cands, reports, nil
}

// wakeAt is when the earliest job that was not yet due at the last look
// becomes due (zero: none).
func (c *nextCache) wakeAt() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.wake
}

// update brings e up to date at a look (an ended job only if all), and
// retires its LiveDir entry once it is seen ended or gone. The caller holds
// c.mu.
func (c *nextCache) update(d *dirstamp.Dir, e *nextEntry, now time.Time, all bool, reports []nextReport) []nextReport {
	e.retryDue(now)
	if e.state == stateSettled && !all {
		return reports
	}
	was, wasGone := e.state, e.gone
	reports = c.refresh(d, e, reports)
	if e.state == stateSettled && was != stateSettled || e.gone && !wasGone {
		retire(JobDir(filepath.Join(c.root, e.name)))
	}
	return reports
}

// rootError is StartNext's error for a root it cannot look at.
func rootError(op, root string, err error) error {
	remedy := "check the path: the root is the directory that holds the job directories (the first Submit creates it)"
	if errors.Is(err, fs.ErrPermission) {
		remedy = "give this user read and search permission on the jobs root"
	}
	return errIO(op, root, err, "cannot read the jobs root", remedy)
}

// refresh stats e's directory and reads its records if the stamp says they
// may have changed. The caller holds c.mu.
func (c *nextCache) refresh(d *dirstamp.Dir, e *nextEntry, reports []nextReport) []nextReport {
	defer c.noteState(e)
	st, err := c.lstat(d, e.name)
	e.gone = errors.Is(err, fs.ErrNotExist)
	if err != nil {
		// Removed (the look retires its entry), or not a directory:
		// neither is a job; a directory that appears under the name
		// later is read then.
		e.state, e.stamp = stateUnknown, dirstamp.Stamp{}
		return reports
	}
	if e.state == stateBroken && !e.retryAt.IsZero() && st.SameDir(e.stamp) {
		return reports // its Start failed: left until retryAt
	}
	// An equal stamp is not enough for a directory made again under the
	// same name (inodes are reused), but such a one has its own times,
	// unless it was made in the tick of the last read: then it is racy.
	if e.state != stateUnknown && st == e.stamp && !st.Racy(e.readAt) {
		return reports
	}
	specRel := filepath.Join(e.name, SpecFile)
	if !st.SameDir(e.stamp) {
		e.kind = "" // another directory under the name: another job, until read
	}
	e.stamp, e.readAt = st, c.now()
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

// noteState keeps c.incomplete and c.running true of e, whose state may
// have changed. The caller holds c.mu.
func (c *nextCache) noteState(e *nextEntry) {
	c.incomplete = noteIn(c.incomplete, e, e.state == stateIncomplete)
	c.running = noteIn(c.running, e, e.state == stateRunning)
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

// read reads the records of dir into e. A directory that is not a job yet
// (no job.json), or has no status.json yet, is stateIncomplete, not an
// error. job.json is read again too: the directory may be another job's
// made under the same name.
func (e *nextEntry) read(dir JobDir) error {
	je, gone := readEntry(dir)
	if je.Spec != nil { // even if its status cannot be read: the kind is the job's for good
		e.kind, e.submittedAt, e.priority = je.Spec.Kind, je.Spec.SubmittedAt, je.Spec.Priority
		e.due, _ = dueAt(*je.Spec, je.Status)
	}
	switch {
	case gone: // removed while read: the look retires its entry
		e.state, e.gone = stateUnknown, true
		return nil
	case errors.Is(je.Err, ErrNotJob):
		e.state = stateIncomplete
		return nil
	case je.Err != nil:
		return je.Err
	}
	switch {
	case je.Status == nil:
		e.state = stateIncomplete
	case je.Status.State == Running:
		e.state = stateRunning
	case je.Status.State != Queued:
		e.state = stateSettled
	case pathExists(dir.CancelPath()):
		e.state = stateCancelling
	default:
		e.state = stateQueued
	}
	return nil
}

// take marks e as being started by the caller, unless another StartNext of
// this process is starting it (ok false), and returns its due time as the
// look saw it.
func (c *nextCache) take(e *nextEntry) (due time.Time, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e.taking || e.state != stateQueued {
		return time.Time{}, false
	}
	e.taking = true
	return e.due, true
}

// settle records what Start's err says of e: started (running), passed over
// for good, to be read again, or failed on its own (left for nextRetry).
func (c *nextCache) settle(e *nextEntry, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e.taking = false
	switch s, passed := passedOver(err); {
	case err == nil:
		e.state = stateRunning
	case passed:
		e.state = s
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

// retire removes the entry of dir, a job seen ended or gone, then reads the
// job again and adds the entry back if the job is live after all: a Retry
// (or a Submit under the name) that wrote it live and added its entry
// before the removal would otherwise lose it.
func retire(dir JobDir) {
	inRootOf(dir, func(rd *fsys.Dir) {
		unmarkLive(rd, dir.ID())
		if je, gone := readEntry(dir); !gone && !errors.Is(je.Err, ErrNotJob) && (je.Status == nil || !je.Status.State.Terminal()) {
			markLive(rd, dir.ID())
		}
	})
}

// repairInterval is c's RepairInterval.
func (c *nextCache) repairInterval() time.Duration {
	if c.repairs > 0 {
		return c.repairs
	}
	return RepairInterval
}

// readLive reads LiveDir unless its stamp says it has not changed since the
// last read: its names join c.entries (to be read by the look), and the
// entries whose names left it leave (their jobs ended: whoever saw it
// removed them). It reports whether c.entries changed. The caller holds
// c.mu.
func (c *nextCache) readLive(now time.Time) bool {
	var names []string
	var ls dirstamp.Stamp
	// A LiveDir that is missing, or that cannot be read (not a directory:
	// nothing this package makes), is empty: the root's events and full
	// scans find the live jobs then, and the scans' entries stay until
	// LiveDir changes.
	ld, err := dirstamp.Open(filepath.Join(c.root, LiveDir))
	if err == nil {
		defer ld.Close()
		if ls, err = ld.Stamp(); err != nil {
			ld = nil
		}
	} else {
		ld = nil
	}
	same := c.liveRead && ls == c.liveStamp
	if same && !ls.Racy(c.liveReadAt) {
		return false
	}
	if ld != nil {
		names, _ = ld.Names()
	}
	changed := !same // a new stamp: an entry may have been made again under its name
	seen := make(map[string]bool, len(names))
	for _, name := range names {
		if ValidateJobID(name) != nil {
			continue // not an entry this package makes
		}
		seen[name] = true
		if c.entries[name] == nil {
			c.entries[name] = &nextEntry{name: name}
			changed = true
		}
	}
	for name, e := range c.entries {
		if !seen[name] {
			delete(c.entries, name)
			delete(c.incomplete, e)
			delete(c.running, e)
			changed = true
		}
	}
	// Read again only because its stamp is racy, with the same names: what
	// the last read found holds (a look does not state every live job
	// again for it).
	c.liveStamp, c.liveReadAt, c.liveRead = ls, now, true
	return changed
}

// liveNames are the names of the jobs c holds as live, for a full scan to
// skip. The caller holds c.mu.
func (c *nextCache) liveNames() map[string]bool {
	m := make(map[string]bool, len(c.entries))
	for name := range c.entries {
		m[name] = true
	}
	return m
}

// indexNames reads the directories of names, which the root's events
// named, that c.entries does not hold, and indexes the live ones. It
// reports whether it indexed one or c.entries holds one of names (whose
// directory may have been replaced). The caller holds c.mu.
func (c *nextCache) indexNames(d *dirstamp.Dir, names []string, reports []nextReport) ([]nextReport, bool) {
	any := false
	for _, name := range names {
		if c.entries[name] != nil {
			any = true // its directory changed: the look reads every live job
			continue
		}
		if strings.HasPrefix(name, ".") || name == IndexFile {
			continue
		}
		var added bool
		reports, added = c.index(d, name, reports)
		any = any || added
	}
	return reports, any
}

// index reads the directory name of root d, which the root's events named:
// a live job (or a directory that is not yet one) joins c.entries and gets
// its entry in LiveDir. It reports whether it joined. The caller holds
// c.mu.
func (c *nextCache) index(d *dirstamp.Dir, name string, reports []nextReport) ([]nextReport, bool) {
	e := &nextEntry{name: name}
	reports = c.refresh(d, e, reports)
	if e.gone || e.state == stateUnknown || e.state == stateSettled {
		return reports, false // not a directory, gone, or ended
	}
	c.entries[name] = e
	if ValidateJobID(name) == nil {
		markLiveIn(JobDir(filepath.Join(c.root, name)))
	}
	return reports, true
}
