package jobstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/axqua/jobstore/internal/dirstamp"
)

// nextRetry is how long StartNext leaves a job whose Start failed with an
// error of its own (a record it cannot read, a write that failed) before it
// tries it again.
const nextRetry = time.Minute

// StartNext starts the first startable job under root and returns its Run,
// as Start does: among the queued jobs that are due (no not_before or
// retry_at later than now), have no cancel request and whose kind is one
// of WithKinds' (any kind without it), the highest priority, then the
// earliest submitted_at, then the smallest ID. Of several StartNext calls
// and Workers, in this process or in others on any host, exactly one
// starts a given job; a job another runner won, that has a cancel request
// or that ended meanwhile is passed over, and one whose Start fails
// otherwise is reported to WithSkipped's function and not tried again for
// a minute. A job without status.json is never started.
//
// When no job is startable it waits until one is (a file system event, a
// job's due time, or every WithScanInterval) or ctx is done, and then
// returns an *Error that matches ctx.Err() (ErrorCode "interrupted" or
// "timeout"); with ctx already done it looks once. A missing or unreadable
// root is an error at once. The cache it keeps per root between calls, and
// what a look costs, are in docs/lifecycle.md ("Workers"); a program that
// waits for jobs in a loop should use a Worker.
func StartNext(ctx context.Context, root string, opts ...StartOption) (*Run, error) {
	const op = "start next"
	o, err := newStartOptions(op, root, opts)
	if err != nil {
		return nil, err
	}
	if err := checkKinds(op, root, o.next.kinds); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, errIO(op, root, err, "cannot make the jobs root's path absolute", "give an absolute path")
	}
	c := nextCacheFor(abs)
	defer c.release()
	return c.next(ctx, op, root, o.next, opts)
}

// next is StartNext's loop on c: look, start the best candidate, or wait
// for a change, a job's due time or the scan interval.
func (c *nextCache) next(ctx context.Context, op, root string, no nextOptions, opts []StartOption) (*Run, error) {
	once := ctx.Err() != nil
	var tick *time.Ticker
	if !once {
		scan := no.scan
		if scan <= 0 {
			scan = DefaultScanInterval
		}
		tick = time.NewTicker(scan)
		defer tick.Stop()
	}
	for {
		// Taken before the look, so that a change during the look or
		// between it and the wait is not missed.
		var changed <-chan struct{}
		if !once && !no.noEvents {
			changed = c.watch()
		}
		run, err := c.startOldest(ctx, once, no, opts)
		if run != nil || err != nil {
			return run, err
		}
		if once || ctx.Err() != nil {
			return nil, nextCtxError(op, root, ctx)
		}
		if changed != nil && c.follow() {
			continue // a directory followed only now may have completed meanwhile
		}
		due := newWake(c.wakeAt())
		select {
		case <-changed:
		case <-tick.C:
		case <-due.C():
		case <-ctx.Done():
			due.Stop()
			return nil, nextCtxError(op, root, ctx)
		}
		due.Stop()
	}
}

// wake is a timer for the moment the earliest job not yet due becomes
// due: a waiting StartNext or Worker starts it then, not at its next scan.
type wake struct{ t *time.Timer }

// newWake arms a timer for at; a zero at arms none (C is then nil).
func newWake(at time.Time) wake {
	if at.IsZero() {
		return wake{}
	}
	return wake{time.NewTimer(time.Until(at))}
}

func (w wake) C() <-chan time.Time {
	if w.t == nil {
		return nil
	}
	return w.t.C
}

func (w wake) Stop() {
	if w.t != nil {
		w.t.Stop()
	}
}

// checkKinds refuses an empty kind among WithKinds'.
func checkKinds(op, root string, kinds []string) error {
	for _, k := range kinds {
		if k == "" {
			return errInvalid(op, root, invalid{subject: "kinds", found: k, supported: "non-empty kinds", msg: "an empty kind matches no job", remedy: "name the kinds of job to start, or none for every kind"})
		}
	}
	return nil
}

// nextCtxError is StartNext's error when ctx ends: it unwraps to ctx.Err().
func nextCtxError(op, root string, ctx context.Context) error {
	msg := "stopped waiting for a job to start"
	if cause := context.Cause(ctx); cause != nil && cause != ctx.Err() {
		msg += " (" + cause.Error() + ")"
	}
	return errBecause(op, root, ctx.Err(), msg, "")
}

// startOldest makes one look at the root and tries Start on each startable
// job, oldest first, until one starts. With once unset, it stops (nil, nil)
// as soon as ctx is done.
func (c *nextCache) startOldest(ctx context.Context, once bool, no nextOptions, opts []StartOption) (*Run, error) {
	cands, reports, err := c.look(no.kinds)
	no.report(reports)
	if err != nil {
		return nil, err
	}
	for _, e := range cands {
		if !once && ctx.Err() != nil {
			return nil, nil
		}
		if !c.take(e) {
			continue // another StartNext of this process is starting it
		}
		dir := JobDir(filepath.Join(c.root, e.name))
		run, err := Start(dir, opts...)
		c.settle(e, err)
		if err == nil {
			return run, nil
		}
		if _, passed := passedOver(err); !passed {
			no.report([]nextReport{{dir, err}})
		}
	}
	return nil, nil
}

func (no nextOptions) report(rs []nextReport) {
	if no.skipped == nil {
		return
	}
	for _, r := range rs {
		no.skipped(r.dir, r.err)
	}
}

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

// appendIfCandidate appends e to cands if a call that takes kinds may
// start it now (wall: this host's clock); a job of those kinds that is not
// due yet moves c.wake to its due time, if that is sooner. The caller holds
// c.mu.
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
	kept       map[string]uint64     // the ended jobs at the last full scan: their directory's stampHash
	repairedAt time.Time             // when the last full scan began (zero: none yet)
	repairs    time.Duration         // RepairInterval; tests shorten it
	incomplete map[*nextEntry]bool   // the entries in stateIncomplete, for follow
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
// those whose directory changed). The whole root is read only by a full
// scan (the first look, then every RepairInterval, or when the root's
// events were lost), and the names the root's events named alone between
// them: both index the live jobs that have no entry.
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
	switch {
	case full || c.repairedAt.IsZero() || now.Sub(c.repairedAt) >= c.repairInterval():
		if reports, err = c.repair(d, now, reports); err != nil {
			return nil, nil, rootError(op, c.root, err)
		}
		changed = true
	case len(names) > 0:
		var added bool
		reports, added = c.indexNames(d, names, reports)
		changed = changed || added
	}
	var cands []*nextEntry
	c.wake = time.Time{}
	wall := time.Now()
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
	defer c.noteIncomplete(e)
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

// noteIncomplete keeps c.incomplete true of e, whose state may have
// changed. The caller holds c.mu.
func (c *nextCache) noteIncomplete(e *nextEntry) {
	switch {
	case e.state == stateIncomplete && !c.incomplete[e]:
		if c.incomplete == nil {
			c.incomplete = map[*nextEntry]bool{}
		}
		c.incomplete[e] = true
	case e.state != stateIncomplete && c.incomplete[e]:
		delete(c.incomplete, e)
	}
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
// this process is starting it.
func (c *nextCache) take(e *nextEntry) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e.taking || e.state != stateQueued {
		return false
	}
	e.taking = true
	return true
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
}

// String names a state in test failures.
func (s nextState) String() string {
	names := [...]string{"unknown", "queued", "cancelling", "incomplete", "broken", "running", "settled"}
	if int(s) < len(names) {
		return names[s]
	}
	return fmt.Sprintf("nextState(%d)", int(s))
}
