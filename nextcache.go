package jobstore

import (
	"path/filepath"
)

// newNextCache is a view of root (absolute) for its owner alone, on a
// rootView of its own: a Worker's, or one StartNext call's. Nothing of it
// runs until its first look; close ends it, and its rootView.
func newNextCache(root string) *nextCache {
	c := newNextCacheOn(newRootView(root))
	c.ownsView = true
	return c
}

// newNextCacheOn is a view of v's root for a View, which shares v with its
// WatchRoot channels and ends it.
func newNextCacheOn(v *rootView) *nextCache {
	return &nextCache{root: v.path, view: v, entries: map[string]*nextEntry{}}
}

// close ends c's watch and full scan and returns once their goroutines
// have, and its rootView if it is c's own: nothing of it remains. The
// owner calls it once no call uses c.
func (c *nextCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stop()
	if c.ownsView {
		c.view.end()
	}
}

// lookAlone reports whether the next look is a first look made without a
// watch or a full scan (firstLookAlone).
func (c *nextCache) lookAlone() bool {
	c.looking.Lock()
	defer c.looking.Unlock()
	return c.firstLookAlone
}

// endLookAlone makes the next looks watch and scan as every other's do.
func (c *nextCache) endLookAlone() {
	c.looking.Lock()
	defer c.looking.Unlock()
	c.firstLookAlone = false
}

// stop ends c's watch and its full scan, if any, and returns once their
// goroutines have. The caller holds c.mu (a scan never takes it).
func (c *nextCache) stop() {
	if c.events != nil {
		c.events.stop()
		c.events = nil
	}
	if c.scan != nil {
		c.scan.close()
		c.scan = nil
	}
}

// runningDirs brings the jobs the cache knows as running up to date (a
// stat of each, and a read of those whose directory changed) and returns
// the directories of those still running: what a rescue pass judges, at a
// cost in proportion to the running jobs, not to the root.
func (c *nextCache) runningDirs() []JobDir {
	c.looking.Lock()
	defer c.looking.Unlock()
	d, err := c.view.open()
	if err != nil {
		return nil // the job loop's look reports it
	}
	defer d.Close()
	c.mu.Lock()
	running := make([]*nextEntry, 0, len(c.running))
	for e := range c.running {
		running = append(running, e)
	}
	c.mu.Unlock()
	var dirs []JobDir
	for _, e := range running {
		c.refresh(d, e, true, nil)
		running := e.state == stateRunning
		c.note(e)
		if running {
			dirs = append(dirs, JobDir(filepath.Join(c.root, e.name)))
		}
	}
	return dirs
}

// scansEnded returns how many of c's full scans have ended.
func (c *nextCache) scansEnded() int {
	c.mu.Lock()
	s := c.scan
	c.mu.Unlock()
	if s == nil {
		return 0
	}
	return s.ended()
}

// missedFirstScan is for a look that found nothing and must not call the
// root empty before it was read whole (a look that is the only one, a
// worker about to end idle): before is scansEnded as the look began. When
// no scan had ended by then, it waits for the first to end and reports
// whether one did: the look then looks again, which reads what the scan
// found. A scan that ended before the look began was read by it.
func (c *nextCache) missedFirstScan(before int) bool {
	if before > 0 {
		return false
	}
	c.mu.Lock()
	s := c.scan
	c.mu.Unlock()
	if s == nil {
		return false
	}
	s.awaitFirst()
	return s.ended() > 0
}
