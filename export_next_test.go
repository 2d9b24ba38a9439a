package jobstore

import "fmt"

// WithoutNextEvents turns file system events off in StartNext, leaving its
// scan alone, as on a filesystem that gives none.
func WithoutNextEvents() StartOption {
	return func(o *startOptions) { o.next.noEvents = true }
}

// DropNextCaches drops the StartNext caches of every root no StartNext
// uses now, with their file system watches, as their idle timers would:
// a test that uses StartNext leaves no watch behind for the next test.
func DropNextCaches() {
	nextCaches.mu.Lock()
	var cs []*nextCache
	for _, c := range nextCaches.m {
		cs = append(cs, c)
	}
	nextCaches.mu.Unlock()
	for _, c := range cs {
		c.drop()
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

// waitScan returns once the view's full scan, if one runs, has ended.
func (c *nextCache) waitScan() {
	c.mu.Lock()
	s := c.scan
	c.mu.Unlock()
	if s != nil {
		s.wait()
	}
}
