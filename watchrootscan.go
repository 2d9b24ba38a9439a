package jobstore

import (
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/axqua/jobstore/internal/dirstamp"
)

// The root scan: the first listing of a jobs root, read in parallel and
// settled after Synced; listing the root again and one stat per job
// directory for the poll; and each directory's stamp, which says when its
// records must be read again.

// firstScan makes the jobs of the first listing; startScan reads them.
func (w *rootWatch) firstScan(des []fs.DirEntry) {
	w.scanned = make([]*rootJob, 0, len(des))
	for _, de := range des {
		if j := w.newJob(de.Name(), de.Type()); j != nil {
			j.inFirst, j.reading = true, true // read by the scan, not the readers
			w.jobs[j.name] = j
			w.scanned = append(w.scanned, j)
		}
	}
	w.scanReads = make([]jobRead, len(w.scanned))
	w.scanDone = make([]atomic.Bool, len(w.scanned))
	w.scanReady = make(chan struct{}, 1)
	// A root with no job has nothing to read: the listing is taken in now,
	// so that Synced comes at once (no read will ever wake takeScan).
	w.takeScan()
}

// startScan reads every job of the first listing, in parallel as List does
// and nothing more, so that Synced costs what List costs and a look for
// cancel.json per job; the watch takes in and delivers what is read as it
// comes (takeScan). Their directories are watched, or handed to the poll,
// after Synced (settle).
func (w *rootWatch) startScan() {
	jobs, reads, done, ready := w.scanned, w.scanReads, w.scanDone, w.scanReady
	w.readers.Go(func() {
		parallel(len(jobs), func(i int) {
			select {
			case <-w.stop:
				return
			default:
			}
			reads[i] = readJob(jobs[i], maskAll, false)
			done[i].Store(true)
			select {
			case ready <- struct{}{}:
			default: // a wake is already waiting
			}
		})
	})
}

// takeScan takes in the first listing's reads that are done, in order.
func (w *rootWatch) takeScan() {
	for w.scanNext < len(w.scanned) && w.scanDone[w.scanNext].Load() {
		j := w.scanned[w.scanNext]
		w.scanned[w.scanNext] = nil
		w.applyRead(w.scanReads[w.scanNext])
		w.scanReads[w.scanNext] = jobRead{}
		w.scanNext++
		if j.gone {
			j.inFirst = false
			continue
		}
		w.first.enqueue(j)
		w.unsettled.enqueue(j)
	}
	if w.scanNext == len(w.scanned) {
		w.scanned, w.scanReads, w.scanDone, w.scanReady = nil, nil, nil, nil
	}
}

// settle watches up to n jobs of the first listing, or hands them to the
// poll, after Synced: a watch, then one stat of the directory. A directory
// whose time is Settled at the listing's start (dirstamp, by a clock that
// may be another host's unless the root's events tell everything) was not
// changed since before it was read, and is settled; any other is read
// again, since a change between its read and its watch told nobody.
func (w *rootWatch) settle(n int) {
	w.scan.beginScan()
	defer w.scan.endScan()
	listed := time.Unix(0, w.listed)
	for ; n > 0; n-- {
		j := w.unsettled.peek()
		if j == nil {
			return
		}
		w.unsettled.pop()
		if j.gone {
			continue
		}
		if w.subscribe(j) == nil || !w.local {
			w.polled[j] = struct{}{}
		}
		fi, ok := w.lookAtJob(j)
		if !ok {
			continue
		}
		if mtime := fi.ModTime().UnixNano(); dirstamp.Settled(mtime, listed, !w.local) {
			j.stamp = dirstamp.SettledAt(mtime, w.readClock())
		} else {
			j.stamp.Look(mtime, w.readClock())
			w.schedule(j, w.pollMask(j))
		}
	}
}

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
