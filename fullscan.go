package jobstore

import (
	"errors"
	"path/filepath"
	"sync"
	"time"

	"github.com/axqua/jobstore/internal/dirstamp"
)

// fullScan is a view's full scan of its root, which repairs the live index:
// it reads every job directory the view does not know as live, but those
// whose directory is as an earlier scan left it when it found the job
// ended, and makes the LiveDir entry of each live job that has none. The
// view finds those jobs through LiveDir, as it finds every other. It also
// names to the view the live jobs it knows whose directory is no longer as
// the view read it (replaced by hand, without LiveDir changing), for the
// view to read again.
//
// A scan runs on its own goroutine, so that no look waits for it: the cost
// of reading every job a root keeps (the first scan of a view reads each
// one's records once; later ones stat each directory and read only those
// that changed) is paid beside the work, never before a start.
type fullScan struct {
	root string
	view *rootView // whose listing it reads

	mu      sync.Mutex
	running bool
	began   time.Time // when the last scan began; zero: none yet
	scans   int       // scans that ended
	stopped bool
	found   []string // live jobs without an entry the scans found, for the view's next look

	kept   map[string]keptEnd // the ended jobs the last scan found (these two: the running scan's alone)
	keptAt time.Time          // when the last scan had stat'ed all of them
	stop   chan struct{}      // closed by close
	wg     sync.WaitGroup
}

func newFullScan(v *rootView) *fullScan {
	return &fullScan{root: v.path, view: v, stop: make(chan struct{})}
}

// startIfDue begins a scan on its own goroutine unless one runs, the view
// was closed, or the last began less than every ago (force: whenever none
// runs), and reports whether it began one. known are the names the view
// holds as live, with the stamp of each one's directory as the view read
// it: the scan reads none of them, and names those whose stamp changed.
func (s *fullScan) startIfDue(now time.Time, every time.Duration, force bool, known func() map[string]dirstamp.Stamp) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running || s.stopped || !force && !s.began.IsZero() && now.Sub(s.began) < every {
		return false
	}
	s.running, s.began = true, now
	names := known()
	s.wg.Go(func() {
		defer func() {
			s.mu.Lock()
			s.running = false
			s.scans++
			s.mu.Unlock()
		}()
		s.run(names)
	})
	return true
}

// takeFound returns the live jobs without an entry that the scans found
// since the last call: the view reads them (their entry may be missing
// still, if LiveDir cannot be written).
func (s *fullScan) takeFound() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	found := s.found
	s.found = nil
	return found
}

// wait returns once the running scan, if any, has ended.
func (s *fullScan) wait() { s.wg.Wait() }

// awaitFirst returns once the first scan has ended, or at once when none
// has and none runs (the view was closed).
func (s *fullScan) awaitFirst() {
	s.mu.Lock()
	done := s.scans > 0 || s.stopped || !s.running
	s.mu.Unlock()
	if !done {
		s.wg.Wait()
	}
}

// ended returns how many scans have ended.
func (s *fullScan) ended() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.scans
}

// close ends the running scan, if any, and returns once it has; no scan
// begins after.
func (s *fullScan) close() {
	s.mu.Lock()
	if !s.stopped {
		s.stopped = true
		close(s.stop)
	}
	s.mu.Unlock()
	s.wg.Wait()
}

func (s *fullScan) run(known map[string]dirstamp.Stamp) {
	d, err := s.view.open()
	if err != nil {
		return // the look reports it
	}
	defer d.Close()
	entries, _, err := s.view.list.entries(d, time.Now())
	if err != nil {
		return
	}
	kept := make(map[string]keptEnd, len(s.kept))
	for _, de := range entries {
		select {
		case <-s.stop:
			return
		default:
		}
		name := de.Name
		was, live := known[name]
		statAt := time.Now()
		st, err := d.Lstat(name)
		switch {
		case err != nil:
			continue // gone, or not a directory: no job
		case live:
			if st != was {
				s.addFound(name)
			}
			continue
		}
		h := stampHash(st)
		old, ok := s.kept[name]
		if ok && old.h == h && old.clean {
			kept[name] = old // ended, and unchanged since
			continue
		}
		dir := JobDir(filepath.Join(s.root, name))
		je, gone := readEntry(dir)
		switch {
		case gone, errors.Is(je.Err, ErrNotJob):
			// gone, or a directory without job.json: no job
		case je.Status != nil && je.Status.State.Terminal():
			// Clean once read again a tick after an earlier scan saw
			// the same stamp (tickOver): then a change moves it.
			kept[name] = keptEnd{h: h, clean: ok && old.h == h && tickOver(st, s.keptAt, statAt)}
		default: // live (or unreadable, which a look reports): index it
			if ValidateJobID(name) == nil {
				markLiveIn(dir)
			}
			s.addFound(name)
		}
	}
	s.kept, s.keptAt = kept, time.Now()
}

// keptEnd is an ended job as a full scan left it: its directory's
// stampHash, and whether that stamp is clean (cleanStamp's rule).
type keptEnd struct {
	h     uint64
	clean bool
}

// addFound names name to the view's next look.
func (s *fullScan) addFound(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.found = append(s.found, name)
}
