package jobstore

import (
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

// rootWatch is the state of one WatchRoot. Everything but the readers runs
// on the goroutine of loop.
type rootWatch struct {
	o       watchOptions
	root    string // as the caller gave it: the JobDirs are root + name
	rootAbs string // as events name it
	out     chan RootUpdate

	view     *rootView      // its subscriptions and the root's listing, shared with a View's StartNext
	ownsView bool           // releaseAll ends view
	listGen  uint64         // the generation of the last listing taken in
	round    rootRound      // the root's listing and stats
	sink     *fsevents.Sink // this consumer's, of view; nil without events
	jobFiles []string       // what a job directory's subscription follows: job.json, status.json, cancel.json
	rootSub  *viewSub
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

	clock func() time.Time // tests only: the stamps' clock; nil: time.Now
}

// rootJob is one job as the watch knows it.
type rootJob struct {
	name  string
	dir   JobDir
	sub   *viewSub   // nil: not watched
	link  bool       // a symbolic link: never watched nor read through
	stamp cleanStamp // for the poll
	gen   int        // the poll that last stat'ed it
	seen  int        // the listing that last saw it

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

// readClock is the clock of the watch's stamps: this host's monotonic one
// (cleanStamp), or the test's.
func (w *rootWatch) readClock() time.Time {
	if w.clock != nil {
		return w.clock()
	}
	return time.Now()
}

// sentView is what the last update delivered of a job said.
type sentView struct {
	seq                           uint64
	spec, status, cancel, removed bool
	err                           string
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

// readMask says which records of a job to read.
type readMask uint8

const (
	maskSpec readMask = 1 << iota
	maskStatus
	maskCancel
	maskAll = maskSpec | maskStatus | maskCancel
)

// readRequest asks a reader to read the records mask names of a job.
type readRequest struct {
	job   *rootJob
	mask  readMask
	stamp bool // take the directory's time first (a watched job)
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
