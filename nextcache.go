package jobstore

import (
	"path/filepath"
	"sync"
	"time"

	"github.com/axqua/jobstore/internal/dirstamp"
)

// nextCaches holds the caches of the roots StartNext was called on in this
// process. Unexported and never replaced by a caller.
var nextCaches struct {
	mu sync.Mutex
	m  map[string]*nextCache
}

// nextCacheIdle is how long the cache of a root, and its file system
// watch, are kept after the last StartNext call on it returned. A worker
// that calls StartNext again within it keeps both: a watch made and
// removed per call would cost more than the call (removing an inotify
// watch waits for an RCU grace period, milliseconds).
const nextCacheIdle = 10 * time.Minute

// maxNextCaches bounds the roots whose StartNext cache is kept: making
// one more drops the least recently used idle cache first.
const maxNextCaches = 16

// nextCacheFor returns root's cache (root is absolute), counting a user
// until release.
func nextCacheFor(root string) *nextCache {
	nextCaches.mu.Lock()
	defer nextCaches.mu.Unlock()
	if nextCaches.m == nil {
		nextCaches.m = map[string]*nextCache{}
	}
	c := nextCaches.m[root]
	if c == nil {
		for len(nextCaches.m) >= maxNextCaches && dropOldestIdle() {
		}
		c = &nextCache{root: root, entries: map[string]*nextEntry{}}
		nextCaches.m[root] = c
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.users++
	if c.idle != nil {
		c.idle.Stop()
		c.idle = nil
	}
	return c
}

// dropOldestIdle drops the cache that has been idle longest, if any is
// idle, and reports whether it dropped one. The caller holds
// nextCaches.mu.
func dropOldestIdle() bool {
	var oldest *nextCache
	for _, c := range nextCaches.m {
		c.mu.Lock()
		if c.users == 0 && (oldest == nil || c.lastUse.Before(oldest.lastUse)) {
			oldest = c
		}
		c.mu.Unlock()
	}
	if oldest == nil {
		return false
	}
	oldest.mu.Lock()
	defer oldest.mu.Unlock()
	delete(nextCaches.m, oldest.root)
	if oldest.idle != nil {
		oldest.idle.Stop()
	}
	oldest.stop()
	return true
}

// release ends a use of c begun by nextCacheFor; the last one arms the
// timer that drops c after nextCacheIdle.
func (c *nextCache) release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.users--
	if c.users == 0 {
		c.lastUse = time.Now()
		c.idle = time.AfterFunc(nextCacheIdle, c.drop)
	}
}

// drop forgets c and ends its watch, unless a StartNext uses it again.
func (c *nextCache) drop() {
	nextCaches.mu.Lock()
	defer nextCaches.mu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.users > 0 || nextCaches.m[c.root] != c {
		return
	}
	delete(nextCaches.m, c.root)
	c.stop()
}

// newOwnedCache is a cache of root that no StartNext shares: a Worker's
// view of its root, released by close.
func newOwnedCache(root string) *nextCache {
	return &nextCache{root: root, entries: map[string]*nextEntry{}, users: 1}
}

// close ends an owned cache's watch; nothing of it remains.
func (c *nextCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stop()
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
	d, err := dirstamp.Open(c.root)
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
