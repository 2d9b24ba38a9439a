package jobstore

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/axqua/jobstore/internal/fsevents"
)

// RootUpdate is one thing WatchRoot learned about a jobs root.
//
// An update about a job has Dir and the job's records as read just before
// it was sent, by List's rules: Spec nil if job.json is unreadable, Status
// nil if there is no status.json yet or it is unreadable, Cancel nil if
// there is no cancel request or it is unreadable, and Err the first
// problem (the directory's own, then job.json's, status.json's,
// cancel.json's). Removed: the job directory is gone (only Dir is set).
// Synced: every job has had its first update (nothing else is set). An
// update with neither Dir nor Synced is about the root itself: Err says
// what is wrong with it.
//
// The records are the receiver's own: no other update shares them.
type RootUpdate struct {
	Dir     JobDir
	Spec    *JobSpec
	Status  *JobStatus
	Cancel  *CancelRequest
	Removed bool
	Synced  bool
	Err     error
}

// WatchRoot follows every job under root, as List finds them, until ctx is
// done: the jobs there now, the jobs added later, their status changes,
// cancel requests and removals.
//
// It returns an *Error at once if root cannot be read. Otherwise the
// channel delivers, in this order:
//
//   - one update for each job under root, with its current records;
//   - one update with Synced set (the first update, at once, for a root
//     with no job yet);
//   - then changes as they are seen: a job added (its first update), a
//     status with a higher seq than the last one delivered, a cancel
//     request, a record that became readable or unreadable, a job removed
//     (Removed).
//
// For each job no status is delivered after one with a higher seq, and no
// update repeats the one before it. When a job changes faster than the
// receiver takes its updates, the intermediate ones are skipped (the
// latest wins), and a job added and removed between two looks may never
// be seen. After Removed, a job in the same directory is a new job, whose
// seq starts again; a job directory replaced between two looks (its
// job.json's submitted_at or kind differ) is reported as Removed and then
// as a new job.
//
// Entries are List's: dot-names, index.json and entries that are not
// directories are skipped, except a symbolic link, which is an update
// with Err of kind ErrNotRegular: it is never followed, read or watched. A
// record that is damaged, too large, a link or a FIFO is that job's Err,
// and never blocks a read; the tolerant reader's retries of a damaged
// record (DefaultReadAttempts reads DefaultReadDelay apart) are spent on
// one of several reading goroutines, without holding up other jobs. A
// root that becomes unreadable after the start is an update with Err and
// no Dir, once until its error changes; a root that is removed has its
// jobs Removed, and is listed again if it comes back.
//
// How changes are seen. Events, from the process's one shared OS watcher
// (as for Watch): one watch on root, one on each job directory. A job
// directory on a filesystem whose every change is told by an event (on
// Linux: ext2/3/4, xfs, btrfs, tmpfs, ramfs, f2fs, zfs, bcachefs, jfs,
// reiserfs, nilfs2) and watched is left to its events. Every other job
// directory is polled: on NFS, SMB, Ceph, FUSE, overlayfs and any
// filesystem not known to be local (on every OS but Linux), where another
// host or a FUSE server changes files without an event; and where no
// watch could be had (beyond fs.inotify.max_user_watches, with events
// unavailable, or WatchRoot's events turned off). The poll runs every
// interval (WithPollInterval, default DefaultPollInterval): one lstat of
// each polled job directory, relative to a descriptor of root, and when
// the directory's modification time changed (a write renames status.json
// into it; cancel.json is linked or renamed in), its status.json and
// cancel.json are read again (job.json only while it has not been read).
// A directory whose time stays the same is read once more when the tick
// of the filesystem's clock that gave it is surely over (100 ms after the
// time was first seen, or 2 s for a time in whole seconds, as FAT, ext3
// and HFS+ write them), since a second change within one tick leaves the
// same time ("racily clean", as git calls it): such a change is seen that
// much later. The root itself is stat'ed at each poll, and listed again
// when its path names another directory or, unless its events tell
// everything, when its time changed.
//
// The first listing's jobs are read before Synced and watched (or handed
// to the poll) right after it, each followed by a stat of its directory:
// one whose time is not older than the listing (less 2 s, and a minute
// more where the time may come from another host's clock) is read again,
// since a change between its read and its watch told nobody. When the OS
// drops events (its queue overflowed), the root is listed again and every
// job directory stat'ed, and the jobs whose time moved since their last
// read are read again.
//
// What the poll does not see: a record rewritten in place (not renamed
// into place) changes no directory time; on a polled job only an event
// tells of it. On NFS a stat may be answered from the client's attribute
// cache, so a change made by another host may reach the poll only after
// the mount's directory attribute timeout (acdirmin to acdirmax, 30 to 60
// s by default; lower them, or mount with noac, for less).
//
// The channel is closed when ctx is done; by then every goroutine, watch
// and descriptor of the WatchRoot is released. A receiver that stops
// receiving must cancel ctx. Cost: one goroutine and max(4, GOMAXPROCS)
// readers (GOMAXPROCS more while the first listing is read), a descriptor
// of root during each poll, one OS watch per job directory plus one for
// root (see Watch for the limits), and, per job, its records and a few
// hundred bytes (BenchmarkWatchRootMemoryPerJob).
func WatchRoot(ctx context.Context, root string, opts ...WatchOption) (<-chan RootUpdate, error) {
	o := watchOptions{poll: DefaultPollInterval, events: true}
	for _, opt := range opts {
		opt(&o)
	}
	w, err := newRootWatch(root, o)
	if err != nil {
		return nil, err
	}
	go w.loop(ctx)
	return w.out, nil
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

// readMask says which records of a job to read.
type readMask uint8

const (
	maskSpec readMask = 1 << iota
	maskStatus
	maskCancel
	maskAll = maskSpec | maskStatus | maskCancel
)

// rootWatch is the state of one WatchRoot. Everything but the readers runs
// on the goroutine of run.
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

// sentView is what the last update delivered of a job said.
type sentView struct {
	seq                           uint64
	spec, status, cancel, removed bool
	err                           string
}

// jobRead is what a reader found.
type jobRead struct {
	job                                 *rootJob
	mask                                readMask
	missing                             bool  // the directory is gone
	mtime                               int64 // the directory's modification time before the read; 0: unknown
	spec                                *JobSpec
	status                              *JobStatus
	cancel                              *CancelRequest
	dirErr, specErr, statusErr, cancErr error
}

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

// readRequest asks a reader to read the records mask names of a job.
type readRequest struct {
	job   *rootJob
	mask  readMask
	stamp bool // take the directory's time first (a watched job)
}

// readLoop reads jobs until the watch stops. It touches nothing of a
// rootJob but its dir, which never changes.
func (w *rootWatch) readLoop() {
	for {
		select {
		case <-w.stop:
			return
		case req := <-w.reads:
			r := readJob(req.job, req.mask, req.stamp)
			select {
			case w.results <- r:
			case <-w.stop:
				return
			}
		}
	}
}

// schedule has mask of j's records read, after the read in flight if any.
func (w *rootWatch) schedule(j *rootJob, mask readMask) {
	if j.gone {
		return
	}
	j.want |= mask
	if j.want == 0 || j.reading || j.waiting {
		return
	}
	j.waiting = true
	w.toRead.enqueue(j)
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

// pollJobs is the safety poll: the root, unless its events tell everything,
// and one stat of each polled job directory.
func (w *rootWatch) pollJobs() {
	now := w.readClock()
	w.gen++
	if !w.local || w.rootSub == nil || !w.rootSub.Live() || w.scan.movedSince() {
		des, err := w.scan.list(now, false)
		w.rootProblem(err)
		if des != nil {
			w.syncRoot(des, now)
		}
	}
	if len(w.polled) > 0 {
		w.statJob(w.polled, now)
	}
}

// statJob stats each job of jobs (one lstat of its directory, relative to a
// descriptor of the root, unless sync stat'ed it in this generation) and
// reads again the records of those whose directory changed.
func (w *rootWatch) statJob(jobs map[*rootJob]struct{}, now int64) {
	w.scan.beginScan()
	defer w.scan.endScan()
	for j := range jobs {
		if j.gen == w.gen {
			continue
		}
		j.gen = w.gen
		if fi, ok := w.lookAtJob(j); ok && j.stamp.settledBy(fi.ModTime().UnixNano(), now) {
			w.schedule(j, w.pollMask(j))
		}
	}
}

// lookAtJob stats j's directory for the poll: false, with j dealt with, if it
// is gone or no longer the entry j stands for, or cannot be stat'ed (a
// read then says why).
func (w *rootWatch) lookAtJob(j *rootJob) (fs.FileInfo, bool) {
	fi, err := w.scan.stat(j.name)
	switch {
	case err != nil && errors.Is(err, fs.ErrNotExist):
		w.dropJob(j)
	case err != nil:
		w.schedule(j, maskAll)
	case !isJobEntry(j.name, fi.Mode().Type()) || j.link != (fi.Mode()&fs.ModeSymlink != 0):
		w.dropJob(j)
		w.addJob(j.name, fi) // nil if no job any more
		if n := w.jobs[j.name]; n != nil {
			n.gen = w.gen
		}
	default:
		return fi, true
	}
	return nil, false
}

// pollMask is what to read of a job whose directory changed: status.json
// and cancel.json, and job.json while it has not been read.
func (w *rootWatch) pollMask(j *rootJob) readMask {
	if j.spec == nil {
		return maskAll
	}
	return maskStatus | maskCancel
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

// offer queues j's update if the receiver does not have its view yet.
// A job of the first listing waits in its queue until its first update.
func (w *rootWatch) offer(j *rootJob) {
	if j.inFirst || j.queued || !w.owed(j) {
		return
	}
	j.queued = true
	w.changes.enqueue(j)
}

// owed reports whether the receiver lacks j's latest view.
func (w *rootWatch) owed(j *rootJob) bool {
	if j.gone {
		return j.delivered && !j.sent.removed
	}
	return j.loaded && (!j.delivered || j.view() != j.sent)
}

// What w.next holds.
const (
	noUpdate = iota
	jobUpdate
	syncedUpdate
	rootUpdate
)

// prepare puts in w.next what is to be delivered next, if anything:
// before Synced, the first listing's jobs in order, then Synced; after,
// the root's problem, then the queued changes in order.
func (w *rootWatch) prepare() {
	kind, j := w.headUpdate()
	if kind == w.nextKind && j == w.nextJob && (j == nil || j.ver == w.nextVer) && kind != rootUpdate {
		return
	}
	w.nextKind, w.nextJob = kind, j
	switch kind {
	case jobUpdate:
		w.next, w.nextVer = j.nextUpdate(), j.ver
	case syncedUpdate:
		w.next = RootUpdate{Synced: true}
	case rootUpdate:
		w.next = RootUpdate{Err: w.rootErr}
	default:
		w.next = RootUpdate{}
	}
}

// headUpdate is what is to be delivered next; it drops from the queues what is
// no longer owed (a job removed before its first update, a view that came
// back to what was delivered).
func (w *rootWatch) headUpdate() (int, *rootJob) {
	if !w.synced {
		for j := w.first.peek(); j != nil; j = w.first.peek() {
			if !j.gone {
				return jobUpdate, j
			}
			w.first.pop()
			j.inFirst = false
		}
		if w.scanned != nil {
			return noUpdate, nil // more of the first listing to come
		}
		return syncedUpdate, nil
	}
	if w.rootErrDue {
		return rootUpdate, nil
	}
	for j := w.changes.peek(); j != nil; j = w.changes.peek() {
		if w.owed(j) {
			return jobUpdate, j
		}
		w.changes.pop()
		j.queued = false
	}
	return noUpdate, nil
}

// delivered records that w.next was received.
func (w *rootWatch) delivered() {
	switch w.nextKind {
	case jobUpdate:
		j := w.nextJob
		if j.inFirst {
			w.first.pop()
			j.inFirst = false
		} else {
			w.changes.pop()
			j.queued = false
		}
		j.delivered = true
		if j.gone {
			j.sent.removed = true
		} else {
			j.sent = j.view()
			w.offer(j) // changes that came before Synced
		}
	case syncedUpdate:
		w.synced = true
		for _, j := range w.jobs {
			w.offer(j) // changes of the first listing's jobs wait for Synced
		}
	case rootUpdate:
		w.rootErrSent, w.rootErrDue = w.rootErr.Error(), false
	}
	w.nextKind, w.nextJob = noUpdate, nil
}

// view is what an update of j says now, in short.
func (j *rootJob) view() sentView {
	v := sentView{spec: j.spec != nil, cancel: j.cancel != nil}
	if st := j.shownStatus(); st != nil {
		v.status, v.seq = true, st.Seq
	}
	if err := j.firstErr(); err != nil {
		v.err = err.Error()
	}
	return v
}

// shownStatus is the status an update shows: none while status.json is
// unreadable (as List).
func (j *rootJob) shownStatus() *JobStatus {
	if j.statusErr != nil {
		return nil
	}
	return j.status
}

func (j *rootJob) firstErr() error {
	for _, err := range []error{j.dirErr, j.specErr, j.statusErr, j.cancErr} {
		if err != nil {
			return err
		}
	}
	return nil
}

// nextUpdate is j's update: its records as last read, the receiver's own.
func (j *rootJob) nextUpdate() RootUpdate {
	if j.gone {
		return RootUpdate{Dir: j.dir, Removed: true}
	}
	u := RootUpdate{Dir: j.dir, Err: j.firstErr()}
	if j.spec != nil {
		s := copySpec(*j.spec)
		u.Spec = &s
	}
	if st := j.shownStatus(); st != nil {
		s := copyStatus(*st)
		u.Status = &s
	}
	if j.cancel != nil {
		c := *j.cancel
		u.Cancel = &c
	}
	return u
}

// copySpec copies spec deeply, so that no slice or map is shared.
func copySpec(spec JobSpec) JobSpec {
	spec.Params = bytes.Clone(spec.Params)
	spec.Labels = maps.Clone(spec.Labels)
	return spec
}

// readJob reads the records mask names of j, opening its directory once
// and never through a link, by List's rules: nothing else is read from a
// directory without job.json. With stamp, the directory's modification
// time is taken first.
func readJob(j *rootJob, mask readMask, stamp bool) jobRead {
	r := jobRead{job: j, mask: mask}
	d, err := openJobDir("read job", j.dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			r.missing = true
		} else {
			r.dirErr = err
		}
		return r
	}
	defer d.Close()
	if stamp {
		if fi, err := d.Lstat("."); err == nil {
			r.mtime = fi.ModTime().UnixNano()
		}
	}
	o := newReadOptions(nil)
	if mask&maskSpec != 0 {
		spec, err := readSpecIn(d, o, specSchema())
		if err != nil {
			r.specErr = err
			if errors.Is(err, ErrNotJob) {
				return r
			}
		} else {
			r.spec = &spec
		}
	}
	if mask&maskStatus != 0 {
		r.status, r.statusErr = readStatusIn(d, o, statusSchema())
	}
	if mask&maskCancel != 0 {
		if _, err := d.Lstat(CancelFile); errors.Is(err, fs.ErrNotExist) {
			return r // the usual case, for the price of a stat
		}
		r.cancel, r.cancErr = readCancelIn(d, o)
		if r.cancel != nil && r.cancel.JobID != j.dir.ID() {
			r.cancel, r.cancErr = nil, errWrongJobID("read cancel request", j.dir.CancelPath(), r.cancel.JobID, j.dir)
		}
	}
	return r
}

// jobQueue is a FIFO of jobs.
type jobQueue struct {
	items []*rootJob
	head  int
}

func (q *jobQueue) enqueue(j *rootJob) { q.items = append(q.items, j) }

func (q *jobQueue) peek() *rootJob {
	if q.head < len(q.items) {
		return q.items[q.head]
	}
	return nil
}

func (q *jobQueue) pop() {
	q.items[q.head] = nil
	q.head++
	switch {
	case q.head == len(q.items):
		q.items, q.head = q.items[:0], 0
	case q.head >= 64 && 2*q.head >= len(q.items):
		n := copy(q.items, q.items[q.head:])
		clear(q.items[n:])
		q.items, q.head = q.items[:n], 0
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
