package jobstore

import (
	"io/fs"
	"os"
	"path/filepath"

	"github.com/axqua/jobstore/internal/dirstamp"
)

// The root scan: a jobs root listed again only when it changed, one stat
// per job directory relative to a descriptor of the root, and which of its
// entries are jobs (isJobEntry).

// rootScan is a jobs root seen for a poll that costs one stat per job
// directory and reads only what changed. It keeps the root's own stamp (the
// root is listed again only when it changed, or its path names another
// directory); the caller keeps a stamp per job directory, and reads that
// job's records only when its stamp says so after a stat:
//
//	s := newRootScan(op, root)
//	des, err := s.list(now, false) // nil, nil: unchanged since the last listing
//	s.beginScan()                  // a descriptor of the root for a round of stats
//	fi, err := s.stat(name)        // one fstatat, relative to it, never following a link
//	if seen.Look(fi.ModTime().UnixNano(), now) { /* read name's records */ }
//	s.endScan()
//
// now is a monotonic clock in nanoseconds, never 0. WatchRoot polls with
// it (a directory's time changes when status.json is replaced in it and
// when cancel.json is published). Both follow internal/dirstamp's racily
// clean policy: StartNext's cache compares fuller stamps (device, inode,
// both times) and reads a racy directory again at each look (Stamp.Racy);
// here a directory is read once more, when its tick is surely over
// (dirstamp.Seen). The descriptor is held only between beginScan and
// endScan: one held for good would keep a removed root's inode alive (and
// its watch silent) and its filesystem from being unmounted.
type rootScan struct {
	op    string
	path  string
	fi    fs.FileInfo // the root as last listed
	stamp dirstamp.Seen
	r     *os.Root // between begin and end
}

func newRootScan(op, root string) *rootScan { return &rootScan{op: op, path: root} }

// list returns the root's job entries (isJobEntry) in name order, or nil
// and no error if the root did not change since the last listing (force
// lists anyway).
func (s *rootScan) list(now int64, force bool) ([]fs.DirEntry, error) {
	fi, err := os.Stat(s.path)
	if err != nil {
		s.stamp = dirstamp.Seen{}
		return nil, errReadRoot(s.op, s.path, err)
	}
	if s.fi == nil || !os.SameFile(fi, s.fi) {
		s.fi, s.stamp, force = fi, dirstamp.Seen{}, true
	}
	if !s.stamp.Look(fi.ModTime().UnixNano(), now) && !force {
		return nil, nil
	}
	des, err := os.ReadDir(s.path)
	if err != nil {
		s.stamp = dirstamp.Seen{}
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
