package jobstore

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/axqua/jobstore/internal/fsevents"
)

// The goroutine of one WatchRoot (loop): it follows the OS watcher's
// events and the poll's ticks, hands reads to the readers (watchrootpoll.go),
// takes in what they find, adds, replaces and drops jobs as the root
// changes, and offers each change for delivery (watchrootdelivery.go).

// rootWatch is the state of one WatchRoot. Everything but the readers runs
// on the goroutine of loop.
type rootWatch struct {
	o       watchOptions
	root    string // as the caller gave it: the JobDirs are root + name
	rootAbs string // as events name it
	scan    *rootScan
	start   time.Time
	out     chan RootUpdate

	sink     *fsevents.Sink // nil without events
	jobFiles []string       // what a job directory's subscription follows: job.json, status.json, cancel.json
	rootSub  *fsevents.Subscription
	local    bool // events tell every change on root's filesystem
	watched  int  // job directories with a subscription

	jobs   map[string]*rootJob // by name, the live ones
	polled map[*rootJob]struct{}

	first     jobQueue      // jobs of the first listing, before Synced
	changes   jobQueue      // jobs whose update waits, after Synced
	synced    bool          // Synced was delivered
	unsettled jobQueue      // jobs of the first listing not yet watched or stamped (settle)
	scanned   []*rootJob    // the first listing, until its reads are all taken in
	scanReads []jobRead     // their reads, by the scan's workers
	scanDone  []atomic.Bool // which reads are done
	scanReady chan struct{} // buffered 1: a read is done
	scanNext  int           // the first read not yet taken in
	listed    int64         // the wall clock (UnixNano) before the first listing

	rootErr     error  // the root's problem, while it lasts
	rootErrSent string // the last one delivered
	rootErrDue  bool

	gen int // counts polls and listings

	toRead  jobQueue // jobs waiting for a reader
	reads   chan readRequest
	results chan jobRead
	stop    chan struct{}
	readers sync.WaitGroup

	next     RootUpdate // the update offered to the receiver
	nextKind int        // what next is (nothing, jobUpdate, ...)
	nextJob  *rootJob
	nextVer  uint64
	changed  []fsevents.Change
}

// rootJob is one job as the watch knows it.
type rootJob struct {
	name  string
	dir   JobDir
	sub   *fsevents.Subscription // nil: not watched
	link  bool                   // a symbolic link: never watched nor read through
	stamp stamp                  // for the poll
	gen   int                    // the poll that last stat'ed it
	seen  int                    // the listing that last saw it

	// The view: the records as last read.
	spec                                *JobSpec
	status                              *JobStatus
	cancel                              *CancelRequest
	dirErr, specErr, statusErr, cancErr error
	loaded                              bool     // read at least once
	ver                                 uint64   // bumped on every change of the view
	topSeq                              uint64   // the highest seq seen: never delivered backwards
	ident                               *JobSpec // the last job.json read: which job this is

	want    readMask // to read once the read in flight is back
	reading bool     // a read is in flight
	waiting bool     // in toRead

	// Delivery.
	inFirst   bool // in the first queue, not yet delivered
	queued    bool // in the changes queue
	delivered bool
	sent      sentView // what the receiver has
	gone      bool     // removed: a Removed update waits, or nothing is owed
}

// newRootWatch subscribes to root's events (unless they are off), lists it
// and makes its jobs; its readers and goroutine start with loop.
func newRootWatch(root string, o watchOptions) (*rootWatch, error) {
	const op = "watch root"
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, errReadRoot(op, root, err)
	}
	w := &rootWatch{
		o: o, root: root, rootAbs: abs, start: time.Now(), out: make(chan RootUpdate, 64),
		jobs: map[string]*rootJob{}, polled: map[*rootJob]struct{}{},
		reads: make(chan readRequest), results: make(chan jobRead), stop: make(chan struct{}),
	}
	if o.events {
		w.sink, w.jobFiles = fsevents.NewSink(), []string{SpecFile, StatusFile, CancelFile}
		// Before the listing, so that nothing added after it goes unseen.
		w.rootSub = fsevents.Subscribe(abs, nil, w.sink)
		w.local = w.rootSub != nil && fsevents.Local(abs)
	}
	w.scan = newRootScan(op, root)
	w.listed = time.Now().UnixNano()
	des, err := w.scan.list(w.readClock(), true)
	if err != nil {
		if w.rootSub != nil {
			w.rootSub.Cancel()
		}
		return nil, err
	}
	w.firstScan(des)
	return w, nil
}

// readClock is the watch's monotonic clock, in nanoseconds (never 0).
func (w *rootWatch) readClock() int64 { return int64(time.Since(w.start)) + 1 }

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
	for _, j := range w.jobs {
		if j.sub != nil {
			j.sub.Cancel()
		}
	}
	if w.rootSub != nil {
		w.rootSub.Cancel()
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
		if fi, err := w.scan.stat(j.name); err == nil {
			j.stamp.settledBy(fi.ModTime().UnixNano(), w.readClock())
		}
	}
}

// examine looks at the root entry name, which an event named: a job
// added, removed, or replaced by another entry.
func (w *rootWatch) examine(name string) {
	if strings.HasPrefix(name, ".") || name == IndexFile {
		return
	}
	fi, err := w.scan.stat(name)
	j := w.jobs[name]
	switch {
	case err != nil && errors.Is(err, fs.ErrNotExist):
		if j != nil {
			w.dropJob(j)
		}
	case err != nil: // cannot look: a read reports why
		if j != nil {
			w.schedule(j, maskAll)
		}
	case !isJobEntry(name, fi.Mode().Type()):
		if j != nil {
			w.dropJob(j)
		}
	case j == nil:
		w.addJob(name, fi)
	case j.link != (fi.Mode()&fs.ModeSymlink != 0): // a directory and a link swapped
		w.dropJob(j)
		w.addJob(name, fi)
	default:
		w.schedule(j, maskAll)
	}
}

// newJob makes the record of a root entry that is a job (a directory or a
// symbolic link, not a dot-name nor index.json), nil for any other entry.
func (w *rootWatch) newJob(name string, typ fs.FileMode) *rootJob {
	if !isJobEntry(name, typ) {
		return nil
	}
	return &rootJob{name: name, dir: JobDir(filepath.Join(w.root, name)), link: typ&fs.ModeSymlink != 0}
}

// isJobEntry reports whether a root entry stands for a job: a directory
// or a symbolic link (reported, never followed) whose name is not a
// dot-name nor index.json.
func isJobEntry(name string, typ fs.FileMode) bool {
	return !strings.HasPrefix(name, ".") && name != IndexFile && (typ.IsDir() || typ&fs.ModeSymlink != 0)
}

// subscribe watches j's directory unless it is a link, events are off, or
// the watch budget (withMaxWatches) is spent.
func (w *rootWatch) subscribe(j *rootJob) *fsevents.Subscription {
	if w.sink == nil || j.link {
		return nil
	}
	if w.o.maxWatches > 0 && w.watched >= w.o.maxWatches {
		return nil
	}
	path := string(j.dir) // its events name it so
	if w.rootAbs != w.root {
		path = filepath.Join(w.rootAbs, j.name)
	}
	j.sub = fsevents.Subscribe(path, w.jobFiles, w.sink)
	if j.sub != nil {
		w.watched++
	}
	return j.sub
}

// addJob starts following a job found after the first listing; fi is its
// entry's lstat. Its first update is sent once it has been read.
func (w *rootWatch) addJob(name string, fi fs.FileInfo) *rootJob {
	j := w.newJob(name, fi.Mode().Type())
	if j == nil {
		return nil
	}
	w.jobs[name] = j
	if w.subscribe(j) == nil || !w.local {
		w.polled[j] = struct{}{}
		j.stamp.settledBy(fi.ModTime().UnixNano(), w.readClock())
	}
	w.schedule(j, maskAll)
	return j
}

// dropJob forgets j, whose directory is gone; a Removed update is owed if
// anything of it was delivered.
func (w *rootWatch) dropJob(j *rootJob) {
	if j.gone {
		return
	}
	j.gone = true
	j.ver++
	if w.jobs[j.name] == j {
		delete(w.jobs, j.name)
	}
	delete(w.polled, j)
	if j.sub != nil {
		j.sub.Cancel()
		j.sub = nil
		w.watched--
	}
	w.offer(j)
}

// relist lists the root again (events were lost, or the root was
// replaced) and reconciles the jobs with it.
func (w *rootWatch) relist() {
	now := w.readClock()
	w.gen++
	des, err := w.scan.list(now, true)
	w.rootProblem(err)
	if des != nil {
		w.syncRoot(des, now)
	}
}

// syncRoot reconciles the jobs with a listing of the root: new entries are
// added (stat'ed once, in this poll's generation), missing ones removed.
func (w *rootWatch) syncRoot(des []fs.DirEntry, now int64) {
	for _, de := range des {
		name := de.Name()
		j := w.jobs[name]
		if j != nil && j.link == (de.Type()&fs.ModeSymlink != 0) {
			j.seen = w.gen
			continue
		}
		fi, err := w.scan.stat(name)
		if err != nil {
			continue // gone since the listing
		}
		if j != nil {
			w.dropJob(j)
		}
		if n := w.addJob(name, fi); n != nil {
			n.seen, n.gen = w.gen, w.gen
		}
	}
	for _, j := range w.jobs {
		if j.seen != w.gen {
			w.dropJob(j)
		}
	}
}

// rootProblem records the root's state after a look: err nil when it was
// fine. A root that is gone has every job removed.
func (w *rootWatch) rootProblem(err error) {
	if err == nil {
		w.rootErr, w.rootErrSent, w.rootErrDue = nil, "", false
		return
	}
	if errors.Is(err, fs.ErrNotExist) {
		for _, j := range w.jobs {
			w.dropJob(j)
		}
	}
	w.rootErr = err
	w.rootErrDue = err.Error() != w.rootErrSent
}

// applyRead takes in what a reader found about a job.
func (w *rootWatch) applyRead(r jobRead) {
	j := r.job
	j.reading = false
	if j.gone {
		return
	}
	if r.missing {
		w.dropJob(j)
		return
	}
	if r.spec != nil {
		if j.ident != nil && !sameJob(j.ident, r.spec) {
			w.replaceJob(j, r)
			return
		}
		j.ident = r.spec
	}
	switch {
	case r.dirErr != nil: // nothing read: the directory is all there is to say
		j.spec, j.status, j.cancel = nil, nil, nil
		j.specErr, j.statusErr, j.cancErr = nil, nil, nil
		if j.sub != nil && errors.Is(r.dirErr, ErrNotRegular) { // swapped for a link since it was watched
			j.sub.Cancel()
			j.sub = nil
			w.watched--
			w.polled[j] = struct{}{}
		}
	case r.mask&maskSpec != 0 && errors.Is(r.specErr, ErrNotJob): // as List: no job.json, nothing else read
		j.spec, j.status, j.cancel = nil, nil, nil
		j.specErr, j.statusErr, j.cancErr = r.specErr, nil, nil
	default:
		if r.mask&maskSpec != 0 {
			j.spec, j.specErr = r.spec, r.specErr
		}
		if r.mask&maskStatus != 0 {
			w.applyStatus(j, r)
		}
		if r.mask&maskCancel != 0 {
			j.cancel, j.cancErr = r.cancel, r.cancErr
		}
	}
	j.dirErr = r.dirErr
	if _, polled := w.polled[j]; !polled && r.mtime != 0 && w.covers(j, r.mask) {
		// The poll stamps what it polls; a watched job is stamped by its
		// reads, so that after lost events only what changed is read again.
		j.stamp.settledBy(r.mtime, w.readClock())
	}
	j.loaded = true
	j.ver++
	w.offer(j)
	w.schedule(j, 0) // what was asked while this read was in flight
}

// covers reports whether a read of mask, in j's state, read every record
// whose change moves the directory's time: status.json, and cancel.json
// and job.json unless they are known (each is written once).
func (w *rootWatch) covers(j *rootJob, mask readMask) bool {
	return mask&maskStatus != 0 && (mask&maskCancel != 0 || j.cancel != nil) && (mask&maskSpec != 0 || j.spec != nil)
}

// applyStatus takes in a status read: never one older than the newest
// seen. An older one means another job under the same name (read job.json
// to tell) or a writer that went back, whose record is not delivered.
func (w *rootWatch) applyStatus(j *rootJob, r jobRead) {
	switch {
	case r.statusErr != nil:
		j.statusErr = r.statusErr
	case r.status == nil:
		j.status, j.statusErr = nil, nil
	case r.status.Seq < j.topSeq:
		if r.mask&maskSpec == 0 {
			j.want |= maskAll
		}
	default:
		j.status, j.statusErr, j.topSeq = r.status, nil, r.status.Seq
	}
}

// replaceJob ends j, whose directory now holds another job (r read it), and
// follows the new one under the same name, with j's watch.
func (w *rootWatch) replaceJob(j *rootJob, r jobRead) {
	n := &rootJob{name: j.name, dir: j.dir, link: j.link, sub: j.sub, stamp: j.stamp, gen: j.gen, seen: j.seen, ident: r.spec}
	_, polled := w.polled[j]
	j.sub = nil
	w.dropJob(j)
	w.jobs[n.name] = n
	if polled {
		w.polled[n] = struct{}{}
	}
	r.job = n
	w.applyRead(r)
}

// sameJob reports whether two reads of job.json are of the same job.
func sameJob(a, b *JobSpec) bool {
	return a.ID == b.ID && a.Kind == b.Kind && a.SubmittedAt.Equal(b.SubmittedAt)
}
