package jobstore

import (
	"errors"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/axqua/jobstore/internal/dirstamp"
)

// lookIn brings the cache up to date with root, through d, the root as
// its caller opened it: the queued jobs it knows are then in c.queue, in
// the order a take starts them. It returns when it began (c's clock), and
// the errors to report.
//
// What it reads grows with the jobs that changed, not with the root nor
// with the queued jobs: LiveDir's entries that its events named (or its
// names whole, when its stamp changed and no events tell what did, at most
// every liveRelist while they do), the directories the root's events
// named, and a stat of each live job that is neither queued nor being
// started (running, incomplete, or not yet read), with a read of those
// whose directory changed. A queued job is not stated at a look: the take
// that picks it checks its directory first (current). The whole root is
// read only by a full scan (fullScan), which a look begins on its own
// goroutine (the first look, then every RepairInterval, or when the root's
// events were lost) and never waits for; the live jobs without an entry
// it found join at a later look.
//
// A look holds c.looking throughout and c.mu only to change what takes
// read (c.entries, the queue and the sets of entries): its file system
// calls are made without c.mu, so that takes and settles never wait for
// them.
func (c *nextCache) lookIn(d *dirstamp.Dir) (time.Time, []nextReport) {
	c.looking.Lock()
	defer c.looking.Unlock()
	now := c.now()
	var reports []nextReport
	c.mu.Lock()
	names, liveNames, full, allLive := c.events.takeHints()
	heard := c.events.hearsLive() && !allLive
	if c.scan == nil {
		c.scan = newFullScan(c.view)
	}
	scan := c.scan
	c.mu.Unlock()
	c.readLive(now, liveNames, heard)
	names = append(names, scan.takeFound()...)
	reports = c.indexNames(d, names, reports)
	for _, e := range c.watchedNow() {
		reports = c.update(d, e, now, reports)
	}
	// Begun once the live jobs were read: it compares their stamps.
	if !c.firstLookAlone {
		scan.startIfDue(now, c.repairInterval(), full, c.liveNames)
	}
	return now, reports
}

// watchedNow returns the entries of c.watched.
func (c *nextCache) watchedNow() []*nextEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	es := make([]*nextEntry, 0, len(c.watched))
	for e := range c.watched {
		es = append(es, e)
	}
	return es
}

// liveRelist is how often at most a look reads LiveDir's names whole while
// its events tell which entries changed on this host: reading them is
// what finds the entries other hosts made or removed (no events cross
// hosts), and it costs in proportion to the live jobs, so a drain that
// changes LiveDir at every job pays it once per liveRelist, not per job.
const liveRelist = time.Second

// readLive brings c.entries up to date with LiveDir: the entries its
// events named (hints; lost: events were lost) are checked one by one, and
// its names are read whole when its stamp says they may have changed,
// unless its events are heard and the last whole read is less than
// liveRelist old. A name that joins is a job to read; one that left is
// forgotten (its job ended: whoever saw it removed the entry); one named
// again by events is read again (its entry was made again: the job may
// have been replaced, or queued again). heard: LiveDir's events are
// watched, and none was lost. The caller holds c.looking.
func (c *nextCache) readLive(now time.Time, hints []string, heard bool) {
	// A LiveDir that is missing, or that cannot be read (not a directory:
	// nothing this package makes), is empty: the root's events and full
	// scans find the live jobs then, and the scans' entries stay until
	// LiveDir changes.
	var ls dirstamp.Stamp
	ld, err := dirstamp.Open(filepath.Join(c.root, LiveDir))
	if err == nil {
		defer ld.Close()
		if ls, err = ld.Stamp(); err != nil {
			ld = nil
		}
	} else {
		ld = nil
	}
	if heard && c.liveHeard && ld != nil {
		for _, name := range hints {
			c.liveHint(ld, name)
		}
	}
	relist := !heard || !c.liveHeard || now.Sub(c.liveReadAt) >= liveRelist
	c.liveHeard = heard
	if c.live.unchanged(ls) || !relist {
		return
	}
	var inodes map[string]uint64
	if ld != nil {
		inodes, _ = ld.Inodes()
	}
	for name, ino := range inodes {
		if ValidateJobID(name) != nil {
			continue // not an entry this package makes
		}
		switch e := c.entries[name]; {
		case e == nil:
			c.add(name).liveIno = ino
		case e.liveIno != ino:
			e.liveIno = ino // made again: the job may be another, or queued again
			c.readAgain(e)
		}
	}
	for name, e := range c.entries {
		if _, ok := inodes[name]; !ok {
			c.forget(e)
		}
	}
	c.live.look(ls, now)
	c.liveReadAt = now
}

// liveHint checks the entry name of LiveDir ld, which its events named.
// The caller holds c.looking.
func (c *nextCache) liveHint(ld *dirstamp.Dir, name string) {
	if ValidateJobID(name) != nil {
		return
	}
	e := c.entries[name]
	_, err := ld.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if e != nil {
			c.forget(e)
		}
	case err != nil:
	case e == nil:
		c.add(name)
	default:
		c.readAgain(e)
	}
	// Its inode is left as the last whole read saw it: the next one reads
	// the job again at most once more.
}

// add makes name a live job to read at the look, and returns its entry.
// The caller holds c.looking.
func (c *nextCache) add(name string) *nextEntry {
	e := &nextEntry{name: name}
	c.hold(e)
	return e
}

// hold makes e c's entry of its name. The caller holds c.looking.
func (c *nextCache) hold(e *nextEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries[e.name] = e
	c.noteState(e)
}

// readAgain makes e's job one to read again: at this look, or, taken, once
// the call that is starting it settles it or the Run it started is closed
// (released). The caller holds c.looking.
func (c *nextCache) readAgain(e *nextEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e.state == stateBroken && !e.retryAt.IsZero() {
		return // its failed Start is tried again at retryAt; a replaced directory is read at once (refresh)
	}
	if e.taking {
		return // read again once settled, or released by its Run
	}
	e.state = stateUnknown
	c.noteState(e)
}

// liveNames are the names of the jobs c holds as live, with the stamp of
// each one's directory as c read it, for a full scan. The caller holds
// c.looking (only a look changes them).
func (c *nextCache) liveNames() map[string]dirstamp.Stamp {
	m := make(map[string]dirstamp.Stamp, len(c.entries))
	for name, e := range c.entries {
		m[name] = e.seen.stamp
	}
	return m
}

// indexNames reads the directories of names, which the root's events or a
// full scan named: one c.entries holds is read again (its directory may
// have been replaced), another is indexed if it is live. The caller holds
// c.looking.
func (c *nextCache) indexNames(d *dirstamp.Dir, names []string, reports []nextReport) []nextReport {
	for _, name := range names {
		if e := c.entries[name]; e != nil {
			c.readAgain(e)
			continue
		}
		if !isJobName(name) {
			continue
		}
		reports = c.index(d, name, reports)
	}
	return reports
}

// index reads the directory name of root d, which the root's events named:
// a live job (or a directory that is not yet one) joins c.entries and gets
// its entry in LiveDir. The caller holds c.looking.
func (c *nextCache) index(d *dirstamp.Dir, name string, reports []nextReport) []nextReport {
	e := &nextEntry{name: name}
	reports = c.refresh(d, e, true, reports)
	if e.gone || e.state == stateUnknown || e.state == stateSettled {
		return reports // not a directory, gone, or ended
	}
	c.hold(e)
	if ValidateJobID(name) == nil {
		markLiveIn(JobDir(filepath.Join(c.root, name)))
	}
	return reports
}
