package jobstore

import (
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"
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
// whose time is older than the listing's start (less racyWindow, and
// clockSlack where the time may come from another host's clock) was not
// changed since before it was read, and is settled; any other is read
// again, since a change between its read and its watch told nobody.
func (w *rootWatch) settle(n int) {
	w.scan.beginScan()
	defer w.scan.endScan()
	margin := int64(racyWindow)
	if !w.local {
		margin += int64(clockSlack)
	}
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
		if mtime := fi.ModTime().UnixNano(); mtime < w.listed-margin {
			j.stamp = stamp{mtime: mtime, seen: w.readClock(), settled: true}
		} else {
			j.stamp.settledBy(mtime, w.readClock())
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
//	if st.settledBy(fi.ModTime().UnixNano(), now) { /* read name's records */ }
//	s.endScan()
//
// now is a monotonic clock in nanoseconds, never 0. WatchRoot polls with
// it (a directory's time changes when status.json is replaced in it and
// when cancel.json is published). StartNext's cache compares fuller stamps
// (internal/dirstamp: device, inode, both times) and reads a racy
// directory again at each look; here a directory is read once more, when
// its tick is surely over. The descriptor is held only between begin and end: one held
// for good would keep a removed root's inode alive (and its watch silent)
// and its filesystem from being unmounted.
type rootScan struct {
	op    string
	path  string
	fi    fs.FileInfo // the root as last listed
	stamp stamp
	r     *os.Root // between begin and end
}

func newRootScan(op, root string) *rootScan { return &rootScan{op: op, path: root} }

// list returns the root's job entries (isJobEntry) in name order, or nil
// and no error if the root did not change since the last listing (force
// lists anyway).
func (s *rootScan) list(now int64, force bool) ([]fs.DirEntry, error) {
	fi, err := os.Stat(s.path)
	if err != nil {
		s.stamp = stamp{}
		return nil, errReadRoot(s.op, s.path, err)
	}
	if s.fi == nil || !os.SameFile(fi, s.fi) {
		s.fi, s.stamp, force = fi, stamp{}, true
	}
	if !s.stamp.settledBy(fi.ModTime().UnixNano(), now) && !force {
		return nil, nil
	}
	des, err := os.ReadDir(s.path)
	if err != nil {
		s.stamp = stamp{}
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

// racyWindow is how long after a directory's modification time is first
// seen a read of it may still miss a change that leaves the same time: the
// coarsest timestamp granularity of a filesystem a root may be on (FAT,
// ext3, HFS+: 1 or 2 s; their times have no fraction of a second).
// fineRacyWindow is the same for a time with a fraction of a second: a
// clock that ticks every few milliseconds (Linux's coarse clock, Windows'
// timer). clockSlack is how far a file server's clock may be behind this
// machine's: a time older than both together is settled at once.
const (
	racyWindow     = 2 * time.Second
	fineRacyWindow = 100 * time.Millisecond
	clockSlack     = time.Minute
)

// stamp is a directory's modification time as of the last read of its
// contents, and whether that read is known to have seen every change
// that left this time.
type stamp struct {
	mtime   int64 // UnixNano
	seen    int64 // when mtime was first seen, on the caller's clock; 0: never
	settled bool
}

// settledBy records a stat of the directory (its modification time, at now on
// the caller's monotonic clock) and reports whether its contents must be
// read: the time differs from the last one, or it is the same and the
// first read that followed it may have missed a change within the same
// tick of the filesystem's clock, and the tick is surely over (racyWindow,
// or fineRacyWindow for a time with a fraction of a second, after the time
// was first seen): then one more read settles it. A time older than
// racyWindow+clockSlack by this machine's clock is settled at once. The
// caller reads after settledBy returns true.
func (s *stamp) settledBy(mtime, now int64) bool {
	if s.seen == 0 || mtime != s.mtime {
		old := time.Now().UnixNano()-mtime > int64(racyWindow+clockSlack)
		*s = stamp{mtime: mtime, seen: now, settled: old}
		return true
	}
	if s.settled {
		return false
	}
	window := racyWindow
	if mtime%int64(time.Second) != 0 {
		window = fineRacyWindow
	}
	s.settled = now-s.seen >= int64(window)
	return s.settled
}
