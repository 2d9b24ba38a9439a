package jobstore

import (
	"path/filepath"
	"strings"
	"time"

	"github.com/axqua/jobstore/internal/dirstamp"
)

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
	if c.liveRead && ls == c.liveStamp && !ls.Racy(c.liveReadAt) {
		return false
	}
	if ld != nil {
		names, _ = ld.Names()
	}
	seen := make(map[string]bool, len(names))
	for _, name := range names {
		if ValidateJobID(name) != nil {
			continue // not an entry this package makes
		}
		seen[name] = true
		if c.entries[name] == nil {
			c.entries[name] = &nextEntry{name: name}
		}
	}
	for name, e := range c.entries {
		if !seen[name] {
			delete(c.entries, name)
			delete(c.incomplete, e)
		}
	}
	c.liveStamp, c.liveReadAt, c.liveRead = ls, now, true
	return true
}

// repair is a full scan: it reads every job directory of root d that
// c.entries does not hold, but those whose directory is as it was when an
// earlier scan found them ended, and indexes the live ones it finds. The
// caller holds c.mu.
func (c *nextCache) repair(d *dirstamp.Dir, now time.Time, reports []nextReport) ([]nextReport, error) {
	names, err := d.Names()
	if err != nil {
		return reports, err
	}
	c.repairedAt = now
	old := c.kept
	c.kept = make(map[string]uint64, len(old))
	for _, name := range names {
		if strings.HasPrefix(name, ".") || name == IndexFile || c.entries[name] != nil {
			continue
		}
		if h, ok := old[name]; ok {
			if st, err := c.lstat(d, name); err == nil && stampHash(st) == h {
				c.kept[name] = h // ended, and unchanged since
				continue
			}
		}
		reports, _ = c.index(d, name, reports)
	}
	return reports, nil
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

// index reads the directory name of root d: an ended job's stamp goes to
// c.kept, a live job (or a directory that is not yet one) joins c.entries
// and gets its entry in LiveDir. It reports whether it joined. The caller
// holds c.mu.
func (c *nextCache) index(d *dirstamp.Dir, name string, reports []nextReport) ([]nextReport, bool) {
	delete(c.kept, name)
	e := &nextEntry{name: name}
	reports = c.refresh(d, e, reports)
	switch {
	case e.gone || e.state == stateUnknown:
		return reports, false // not a directory, or gone
	case e.state == stateSettled:
		if !e.stamp.Racy(e.readAt) {
			c.kept[name] = stampHash(e.stamp)
		}
		return reports, false
	}
	c.entries[name] = e
	if ValidateJobID(name) == nil {
		markLiveIn(JobDir(filepath.Join(c.root, name)))
	}
	return reports, true
}
