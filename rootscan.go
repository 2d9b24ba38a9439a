package jobstore

import (
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/axqua/jobstore/internal/dirstamp"
)

// The root scan: a jobs root listed again only when it changed, one stat
// per job directory relative to a descriptor of the root, which of its
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
	if !s.first.IsZero() && st == s.stamp {
		return false
	}
	*s = cleanStamp{stamp: st, first: now}
	return true
}

// unchanged reports whether st, a stat taken after the last read, says
// that nothing changed since that read: it equals a clean stamp.
func (s *cleanStamp) unchanged(st dirstamp.Stamp) bool {
	return s.clean && !s.first.IsZero() && st == s.stamp
}

// rootScan is a jobs root seen for a poll that costs one stat per job
// directory and reads only what changed. It keeps the root's own stamp (the
// root is listed again only when it changed, or its path names another
// directory); the caller keeps a cleanStamp per job directory, and reads
// that job's records only when it says so after a stat:
//
//	s := newRootScan(op, root)
//	des, err := s.list(now, false) // nil, nil: unchanged since the last listing
//	s.beginScan()                  // a descriptor of the root for a round of stats
//	fi, err := s.stat(name)        // one fstatat, relative to it, never following a link
//	if seen.lookLate(mtimeStamp(fi), now) { /* read name's records */ }
//	s.endScan()
//
// now is this host's monotonic clock (time.Now). WatchRoot polls with it
// (a directory's time changes when status.json is replaced in it and when
// cancel.json is published). The descriptor is held only between
// beginScan and endScan: one held for good would keep a removed root's
// inode alive (and its watch silent) and its filesystem from being
// unmounted.
type rootScan struct {
	op    string
	path  string
	fi    fs.FileInfo // the root as last listed
	stamp cleanStamp
	r     *os.Root // between begin and end
}

func newRootScan(op, root string) *rootScan { return &rootScan{op: op, path: root} }

// list returns the root's job entries (isJobEntry) in name order, or nil
// and no error if the root did not change since the last listing (force
// lists anyway).
func (s *rootScan) list(now time.Time, force bool) ([]fs.DirEntry, error) {
	fi, err := os.Stat(s.path)
	if err != nil {
		s.stamp = cleanStamp{}
		return nil, errReadRoot(s.op, s.path, err)
	}
	if s.fi == nil || !os.SameFile(fi, s.fi) {
		s.fi, s.stamp, force = fi, cleanStamp{}, true
	}
	if !s.stamp.lookLate(mtimeStamp(fi), now) && !force {
		return nil, nil
	}
	des, err := os.ReadDir(s.path)
	if err != nil {
		s.stamp = cleanStamp{}
		return nil, errReadRoot(s.op, s.path, err)
	}
	jobs := des[:0]
	for _, de := range des {
		if isJobEntry(de.Name(), de.Type()) {
			jobs = append(jobs, de)
		}
	}
	return jobs, nil
}

// movedSince reports whether the root's path no longer names the directory
// last listed: it was removed, or replaced.
func (s *rootScan) movedSince() bool {
	fi, err := os.Stat(s.path)
	return err != nil || s.fi == nil || !os.SameFile(fi, s.fi)
}

// beginScan opens the root for a round of stats; without it (or if it fails)
// stat goes by path.
func (s *rootScan) beginScan() {
	if r, err := os.OpenRoot(s.path); err == nil {
		s.r = r
	}
}

func (s *rootScan) endScan() {
	if s.r != nil {
		_ = s.r.Close()
		s.r = nil
	}
}

// stat is an lstat of the root's entry name.
func (s *rootScan) stat(name string) (fs.FileInfo, error) {
	if s.r != nil {
		return s.r.Lstat(name)
	}
	return os.Lstat(filepath.Join(s.path, name))
}

// isJobEntry reports whether a root entry stands for a job: a directory
// or a symbolic link (reported, never followed) whose name is not a
// dot-name nor index.json.
func isJobEntry(name string, typ fs.FileMode) bool {
	return isJobName(name) && (typ.IsDir() || typ&fs.ModeSymlink != 0)
}

// mtimeStamp is the stamp of what a FileInfo says portably of a directory:
// its modification time.
func mtimeStamp(fi fs.FileInfo) dirstamp.Stamp { return dirstamp.Stamp{Mtime: fi.ModTime().UnixNano()} }
