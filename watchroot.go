package jobstore

import (
	"context"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/axqua/jobstore/internal/dirstamp"
	"github.com/axqua/jobstore/internal/fsevents"
)

// WatchRoot follows every job under root, as List finds them, until ctx is
// done. It returns an *Error at once if root cannot be read. Otherwise the
// channel delivers one update for each job under root with its current
// records, then one with Synced set (the first, for a root with no job),
// then changes as they are seen: a job added, a status with a higher seq
// than the last delivered, a cancel request, a record that became readable
// or unreadable, a job removed (Removed).
//
// For each job no status follows one with a higher seq and no update
// repeats the one before it; a receiver slower than the changes gets the
// latest (a job added and removed between two looks may never be seen). A
// job directory replaced is Removed, then a new job. A link is an update
// with Err of kind ErrNotRegular, never followed; a damaged record is that
// job's Err; a root that becomes unreadable is an update with Err and no
// Dir. The channel is closed when ctx is done, with every goroutine, watch
// and descriptor released; a receiver that stops receiving must cancel ctx.
//
// How changes are seen (events, a poll every WithPollInterval), what the
// poll sees late or not at all, and the cost: docs/mechanisms.md#watchroot.
func WatchRoot(ctx context.Context, root string, opts ...WatchOption) (<-chan RootUpdate, error) {
	w, err := newRootWatch(root, watchOptionsOf(opts), nil)
	if err != nil {
		return nil, err
	}
	go w.loop(ctx)
	return w.out, nil
}

// watchOptionsOf applies opts, in order, to WatchRoot's defaults.
func watchOptionsOf(opts []WatchOption) watchOptions {
	o := watchOptions{poll: DefaultPollInterval, events: true}
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// The goroutine of one WatchRoot (loop): the first listing, read in
// parallel and settled after Synced; then the OS watcher's events and the
// poll's ticks, reads handed to the readers (watchrootpoll.go) and taken
// in (watchrootjobs.go), and updates delivered (watchrootdelivery.go).

// newRootWatch subscribes to root's events (unless they are off), lists it
// and makes its jobs, as a consumer of v (nil: a rootView of its own, which
// releaseAll ends); its readers and goroutine start with loop.
func newRootWatch(root string, o watchOptions, v *rootView) (*rootWatch, error) {
	const op = "watch root"
	if v == nil {
		abs, err := filepath.Abs(root)
		if err != nil {
			return nil, errReadRoot(op, root, err)
		}
		return newRootWatchOn(root, o, newRootView(abs), true)
	}
	return newRootWatchOn(root, o, v, false)
}

// newRootWatchOn is newRootWatch on v, which releaseAll ends if owns.
func newRootWatchOn(root string, o watchOptions, v *rootView, owns bool) (*rootWatch, error) {
	w := &rootWatch{
		o: o, root: root, rootAbs: v.path, view: v, round: rootRound{v: v}, ownsView: owns, out: make(chan RootUpdate, 64),
		jobs: map[string]*rootJob{}, polled: map[*rootJob]struct{}{},
		reads: make(chan readRequest), results: make(chan jobRead), stop: make(chan struct{}),
	}
	if o.events {
		w.sink, w.jobFiles = v.consumer(), []string{SpecFile, StatusFile, CancelFile}
		// Before the listing, so that nothing added after it goes unseen.
		w.rootSub = v.subscribe(w.sink, v.path, nil)
		w.local = w.rootSub != nil && fsevents.Local(v.path)
	}
	des, gen, err := w.round.entries(w.readClock())
	if err != nil {
		w.release()
		return nil, errReadRoot("watch root", root, err)
	}
	w.listGen = gen
	w.firstScan(des)
	return w, nil
}

// loop is the watch's goroutine: it hands reads to the readers, applies
// what they find, follows events and the poll, and delivers.
func (w *rootWatch) loop(ctx context.Context) {
	defer close(w.out)
	defer w.releaseAll()
	w.startScan()
	for range max(4, runtime.GOMAXPROCS(0)) {
		w.readers.Go(w.readLoop)
	}
	tick := time.NewTicker(w.o.poll)
	defer tick.Stop()
	var wake <-chan struct{} // nil: no events
	if w.sink != nil {
		wake = w.sink.Ready()
	}
	always := make(chan struct{})
	close(always)
	for {
		var settle <-chan struct{}
		if w.synced && w.unsettled.peek() != nil {
			settle = always
		}
		w.prepare()
		var out chan<- RootUpdate
		if w.nextKind != noUpdate {
			out = w.out
		}
		var reads chan<- readRequest
		var req readRequest
		if j := w.toRead.peek(); j != nil {
			_, polled := w.polled[j]
			reads, req = w.reads, readRequest{j, j.want, !polled}
		}
		select {
		case out <- w.next:
			w.delivered()
		case reads <- req:
			w.toRead.pop()
			req.job.waiting, req.job.reading, req.job.want = false, true, 0
		case r := <-w.results:
			w.applyRead(r)
		case <-wake:
			w.onEvents()
		case <-tick.C:
			w.pollJobs()
		case <-settle:
			w.settle(256)
		case <-w.scanReady: // nil once the scan is taken in
			w.takeScan()
		case <-ctx.Done():
			return
		}
	}
}

// releaseAll stops the readers and releases every watch and the root's
// descriptor.
func (w *rootWatch) releaseAll() {
	close(w.stop)
	w.readers.Wait()
	w.release()
}

// release ends w's subscriptions, and its rootView if it is w's own.
func (w *rootWatch) release() {
	if w.sink != nil {
		w.view.leave(w.sink)
	}
	if w.ownsView {
		w.view.end()
	}
}

// onEvents follows what the OS watcher reported.
func (w *rootWatch) onEvents() {
	var lost bool
	w.changed, lost = w.sink.Take(w.changed[:0])
	if lost {
		// Events were dropped: list the root again, and read again the jobs
		// whose directory changed since it was last read, as a poll would.
		w.relist()
		all := make(map[*rootJob]struct{}, len(w.jobs))
		for _, j := range w.jobs {
			all[j] = struct{}{}
		}
		w.statJob(all, w.readClock())
		return
	}
	for _, c := range w.changed {
		if c.Dir == w.rootAbs {
			if c.Name == "" { // the root went, or is watched again
				w.relist()
			} else {
				w.examine(c.Name)
			}
			continue
		}
		if filepath.Dir(c.Dir) != w.rootAbs {
			continue
		}
		j := w.jobs[filepath.Base(c.Dir)]
		if j == nil {
			continue
		}
		switch c.Name {
		case "": // the directory went, or is watched again
			w.watchedNow(j)
			w.examine(j.name)
		case SpecFile:
			w.schedule(j, maskAll)
		case StatusFile:
			w.schedule(j, w.statusMask(j))
		case CancelFile:
			w.schedule(j, maskCancel)
		}
	}
}

// statusMask is what to read when status.json changed: cancel.json too
// until it is known (written once), so that the read covers every record
// whose change moves the directory's time, and stamps it.
func (w *rootWatch) statusMask(j *rootJob) readMask {
	if j.cancel == nil {
		return maskStatus | maskCancel
	}
	return maskStatus
}

// watchedNow moves j in or out of the poll as its watch lives or dies.
func (w *rootWatch) watchedNow(j *rootJob) {
	if j.sub == nil {
		return
	}
	if j.sub.Live() && w.local {
		delete(w.polled, j)
	} else if _, ok := w.polled[j]; !ok {
		w.polled[j] = struct{}{}
		if es, err := w.round.stat(j.name); err == nil && j.stamp.lookLate(mtimeStamp(es.stamp), w.readClock()) {
			w.schedule(j, w.pollMask(j)) // changed, or not yet clean, since its last read
		}
	}
}

// relist lists the root again (events were lost, or the root was
// replaced) and reconciles the jobs with it.
func (w *rootWatch) relist() {
	now := w.readClock()
	w.gen++
	defer w.round.enter()()
	des, gen, err := w.round.entries(now)
	w.rootProblem(err)
	if err == nil {
		w.listGen = gen
		w.syncRoot(des, now)
	}
}

// firstScan makes the jobs of the first listing; startScan reads them.
func (w *rootWatch) firstScan(des []dirstamp.Entry) {
	w.scanned = make([]*rootJob, 0, len(des))
	for _, de := range des {
		if j := w.newJob(de.Name, de.Type); j != nil {
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
			reads[i] = readJob(jobs[i], maskAll, true) // stamped: settle then needs no read of a clean one
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
// whose stamp is clean (cleanStamp: the first listing's read stamped it, and
// a tick has passed since) is read no more; any other is read again, since
// a change between its read and its watch told nobody.
func (w *rootWatch) settle(n int) {
	defer w.round.enter()()
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
		es, ok := w.lookAtJob(j)
		if !ok {
			continue
		}
		if j.stamp.lookLate(mtimeStamp(es.stamp), w.readClock()) {
			w.schedule(j, w.pollMask(j))
		}
	}
}
