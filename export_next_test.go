package jobstore

import (
	"fmt"
	"time"
)

// WithoutNextEvents turns file system events off in StartNext, leaving its
// scan alone, as on a filesystem that gives none.
func WithoutNextEvents() StartOption {
	return func(o *startOptions) { o.next.noEvents = true }
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

// look is lookIn through the root opened for it, as a take's startOldest
// opens it, for tests.
func (c *nextCache) look() (time.Time, []nextReport, error) {
	d, err := c.view.open()
	if err != nil {
		return c.now(), nil, errReadRoot("start next", c.root, err)
	}
	defer d.Close()
	now, reports := c.lookIn(d)
	return now, reports, nil
}
