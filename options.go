package jobstore

import (
	"fmt"
	"io/fs"
	"time"
)

// Every option of the package, and every default it uses: of Start (and
// StartNext), of the writers, the readers, Watch and WatchRoot, and the
// sweeps.

// StartOption configures Start.
type StartOption func(*startOptions)

type startOptions struct {
	claimOptions
	progressInterval time.Duration
	hostSet          bool        // WithHost was given
	next             nextOptions // StartNext's own (next.go); Start ignores them

	// picked, set by StartNext alone, are the kinds it takes: Start
	// refuses a job of another kind (errNotCurrent), which StartNext's
	// look read before a change its directory's stamp does not show yet.
	picked []string
}

// claimOptions are what a claim of a job's next attempt needs (claim.go),
// whoever makes it: Start, Remove, a canceller, Reconcile, Retry.
type claimOptions struct {
	host  string        // WithHost; HostID() when not set
	lease time.Duration // WithLease; DefaultLease when 0
}

// DefaultProgressInterval is how often, at most, a Run writes the progress
// reported to it, unless WithProgressInterval says otherwise.
const DefaultProgressInterval = 100 * time.Millisecond

// WithProgressInterval sets how often, at most, Run.Progress writes
// status.json: one write per d carries the latest values. 0 writes on every
// call, before Progress returns. A negative d makes Start fail with
// ErrInvalid.
func WithProgressInterval(d time.Duration) StartOption {
	return func(o *startOptions) { o.progressInterval = d }
}

// DefaultLease is the lease a runner takes unless WithLease says otherwise:
// long enough that an NFS client's directory attribute cache (acdirmax, 60 s
// by default) cannot hide a fence from a paused runner (see "Many hosts" in
// docs/platforms.md for the bound), short enough that a dead runner on
// another host is marked lost within about two minutes.
const DefaultLease = 90 * time.Second

// minLease is the shortest lease WithLease accepts: renewals every third of
// it must be possible on a loaded machine.
const minLease = 300 * time.Millisecond

// WithLease sets the lease of the Run's claim on its job: the Run renews it
// every d/3 in the background (a small file in the job's attempt
// directory), and a process on another host judges the runner gone, and may
// mark the job lost or start it again, only once it has seen the lease
// unchanged for a whole d by its own clock. A Run whose last renewal is 2d/3
// old by its own clock (it was paused: a debugger, SIGSTOP, a laptop's
// sleep) writes nothing more until it has established its claim again,
// with operations atomic at the server: if nobody took the job over
// meanwhile it goes on (as the next attempt), else every write fails with
// ErrNotOwner. Default DefaultLease; a d below 300 ms makes Start fail with
// ErrInvalid. On one host, where job.lock and the process table decide, the
// lease is never waited for.
func WithLease(d time.Duration) StartOption {
	return func(o *startOptions) { o.lease = d }
}

// WithHost sets the host identity the Run records in status.json's host
// field, instead of HostID(). Processes that share an identity and a
// process table judge each other's pids; any other process judges the Run
// by its lease. An identity longer than 255 bytes or with control
// characters makes Start fail with ErrInvalid; "" records no host, so the
// Run is judged by its lease alone, even on its own host.
func WithHost(id string) StartOption {
	return func(o *startOptions) { o.host, o.hostSet = id, true }
}

// newStartOptions applies opts over the defaults and checks them; an
// invalid value is ErrInvalid naming path (a job directory, or the root
// StartNext looks at).
func newStartOptions[P ~string](op string, path P, opts []StartOption) (startOptions, error) {
	o := startOptions{progressInterval: DefaultProgressInterval, claimOptions: claimOptions{lease: DefaultLease}}
	for _, opt := range opts {
		opt(&o)
	}
	if o.progressInterval < 0 {
		return o, errInvalid(op, string(path), invalid{subject: "progress interval", found: o.progressInterval, supported: "0 (write every update) or more", msg: fmt.Sprintf("%v is negative", o.progressInterval)})
	}
	if o.lease == 0 {
		o.lease = DefaultLease
	}
	if o.lease < minLease {
		return o, errInvalid(op, string(path), invalid{subject: "lease", found: o.lease, supported: fmt.Sprintf("%v or more", minLease), msg: fmt.Sprintf("%v is too short to be renewed every third of it", o.lease)})
	}
	if o.hostSet {
		return o, validateHostID(o.host)
	}
	h, err := HostID()
	o.host = h
	return o, err
}

// Options of StartNext (they are StartOptions too: StartNext starts the
// job it picks with Start and the same options).

// DefaultScanInterval is how often StartNext looks at the jobs root when no
// file system event came, unless WithScanInterval says otherwise.
const DefaultScanInterval = time.Second

// nextOptions are the StartOptions of StartNext alone; Start ignores them.
type nextOptions struct {
	kinds    []string
	scan     time.Duration
	skipped  func(JobDir, error)
	noEvents bool // tests only: the scan alone, as on a filesystem without events

	// handOff, a Worker's, is called once a job is taken and checked, just
	// before its Start: another goroutine takes the next job meanwhile, so a
	// Start that then fails ends the call (errHandedOff).
	handOff func()
}

// WithKinds restricts StartNext to jobs whose kind is one of kinds. Several
// WithKinds add up; without any, every kind is started. An empty kind makes
// StartNext fail with ErrInvalid. Start ignores it.
func WithKinds(kinds ...string) StartOption {
	return func(o *startOptions) { o.next.kinds = append(o.next.kinds, kinds...) }
}

// WithScanInterval sets how often StartNext looks at the jobs root when no
// file system event came (default DefaultScanInterval). It bounds how late
// a job submitted by another host is seen on a shared filesystem that gives
// no events for it (NFS, SMB, FUSE), on top of that filesystem's own
// directory cache. d <= 0 means the default. Start ignores it.
func WithScanInterval(d time.Duration) StartOption {
	return func(o *startOptions) {
		if d > 0 {
			o.next.scan = d
		}
	}
}

// WithSkipped makes StartNext call fn for each job it leaves because of an
// error of the job's own: a record it cannot read (corrupt, written by a
// newer jobstore, not a regular file), reported once (not again while the
// job gives the same error); or a Start that failed for another reason
// than a lost race or a cancel request (job.lock not a file, an I/O error),
// reported at each try, at most once a minute per job. fn is called from
// StartNext's goroutine. Start ignores it.
func WithSkipped(fn func(dir JobDir, err error)) StartOption {
	return func(o *startOptions) { o.next.skipped = fn }
}

// Options of the writers (WriteJSONAtomic, WriteSpec, WriteStatus).

// WriteOption changes how a record is written.
type WriteOption func(*writeOptions)

type writeOptions struct {
	noSync         bool
	perm           fs.FileMode
	replaceTimeout time.Duration
}

func newWriteOptions(opts []WriteOption) writeOptions {
	o := writeOptions{perm: 0o644, replaceTimeout: DefaultReplaceTimeout}
	for _, f := range opts {
		f(&o)
	}
	return o
}

// writeOnce is o for a record written once (job.json, cancel.json): its
// file is made read-only, so that a person or tool editing the job sees it
// is not to be changed.
func (o writeOptions) writeOnce() writeOptions {
	o.perm &^= 0o222
	return o
}

// NoSync skips both fsyncs (of the file and of its directory). The replace
// stays atomic: a reader sees the old record or the new one, never a mix,
// and a crash of the writing process changes nothing of that. A power cut
// or kernel crash may: afterwards the file may hold an earlier record, or,
// on filesystems that can commit the rename before the data (XFS; ext4
// mounted noauto_da_alloc), be empty or NUL-filled, which readers report as
// ErrCorrupt. Use it for high-rate progress updates whose loss costs
// nothing; never for a terminal state.
func NoSync() WriteOption { return func(o *writeOptions) { o.noSync = true } }

// WithPerm sets the new file's permission bits (default 0644; the umask
// applies). Pollers often run as another user: keep the file readable. For
// job.json the write bits are dropped, since it is read-only. On Windows
// only the owner's write bit means anything (without it the file is
// read-only, and Windows never replaces a read-only file), so a record that
// is rewritten (status.json) keeps it there.
func WithPerm(perm fs.FileMode) WriteOption {
	return func(o *writeOptions) { o.perm = perm & fs.ModePerm }
}

// DefaultReplaceTimeout is how long a replace keeps trying on Windows while
// another process holds the record open (WithReplaceTimeout).
const DefaultReplaceTimeout = 2 * time.Second

// WithReplaceTimeout sets how long a replace keeps trying while another
// process holds the record open in a way that forbids it (default
// DefaultReplaceTimeout; 0 tries once). It has an effect on Windows only:
// elsewhere a rename never waits for readers. A negative d is ErrInvalid,
// reported by the write before anything is touched.
func WithReplaceTimeout(d time.Duration) WriteOption {
	return func(o *writeOptions) { o.replaceTimeout = d }
}

// Options of the readers (ReadJSONTolerant, ReadSpec, ReadStatus, ...).

// ReadOption changes how a record is read.
type ReadOption func(*readOptions)

type readOptions struct {
	attempts int
	delay    time.Duration
	maxSize  int64
}

// Defaults of the tolerant reader.
const (
	DefaultReadAttempts = 4
	DefaultReadDelay    = 50 * time.Millisecond
	DefaultMaxSize      = 16 << 20
)

func newReadOptions(opts []ReadOption) readOptions {
	o := readOptions{attempts: DefaultReadAttempts, delay: DefaultReadDelay, maxSize: DefaultMaxSize}
	if len(opts) > 0 {
		o = o.with(opts) // only there is a readOptions moved to the heap, its address given to the options
	}
	return o
}

// with is o changed by opts.
func (o readOptions) with(opts []ReadOption) readOptions {
	p := new(readOptions)
	*p = o
	for _, f := range opts {
		f(p)
	}
	return *p
}

// WithRetries sets how many times a torn or transiently unreadable file is
// read (attempts, at least 1) and the pause between two reads: invalid or
// truncated JSON, and on Windows a sharing violation or access denied while
// a writer replaces the file. It does not change the retries of a stale
// file handle (ESTALE), which have their own budget of 2 s (see
// ReadJSONTolerant), so a read takes at most about 2 s plus
// (attempts-1) × delay, and the time of the reads themselves.
func WithRetries(attempts int, delay time.Duration) ReadOption {
	return func(o *readOptions) { o.attempts, o.delay = max(attempts, 1), max(delay, 0) }
}

// WithMaxSize sets the largest file the reader accepts (default 16 MiB);
// a larger one is ErrTooLarge, without retry.
func WithMaxSize(n int64) ReadOption { return func(o *readOptions) { o.maxSize = n } }

// Options of Watch and WatchRoot.

// DefaultPollInterval is how often Watch reads status.json when no event
// came, unless WithPollInterval says otherwise.
const DefaultPollInterval = time.Second

// WatchOption configures Watch.
type WatchOption func(*watchOptions)

type watchOptions struct {
	poll       time.Duration
	events     bool
	maxWatches int // WatchRoot: job directories watched at most (0: as many as the OS gives)
}

// WithPollInterval sets the safety poll: status.json is read every d even
// when no event came (default DefaultPollInterval). d <= 0 means the default.
func WithPollInterval(d time.Duration) WatchOption {
	return func(o *watchOptions) {
		if d > 0 {
			o.poll = d
		}
	}
}

// withoutEvents turns file system events off, leaving the poll alone: the
// path a watcher takes where the OS gives no events.
func withoutEvents() WatchOption { return func(o *watchOptions) { o.events = false } }

// Sweeping.

// DefaultSweepAge is how old a temp file must be before ReconcileAll removes
// it. A live writer holds its temp file for milliseconds (seconds on a slow
// disk); a quarter of an hour leaves any live writer alone.
const DefaultSweepAge = 15 * time.Minute

// withMaxWatches makes WatchRoot watch at most n job directories, polling
// the others: what it does when the OS refuses a watch
// (fs.inotify.max_user_watches), without lowering the limit for everyone.
func withMaxWatches(n int) WatchOption { return func(o *watchOptions) { o.maxWatches = n } }
