package jobstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Handler does one job's work. ctx ends when the job is asked to stop (a
// cancel request), when its timeout passes, or when the Worker stops and
// its grace is over; run is the job's Run, for Progress and SetMessage.
// Returning nil ends the job succeeded, an error ends the attempt failed
// with the error's text (retried while the job has attempts left), unless
// the handler called run.Finish itself. Once the job's timeout has passed
// the attempt failed "timed out", whatever the handler returns (nil
// included). The Worker closes run.
type Handler func(ctx context.Context, run *Run) error

// Worker runs the jobs of one root with a Handler, up to WithParallel at a
// time, as StartNext would start them, and rescues the jobs whose runner
// is gone. It owns its view of the root and its OS watches, released when
// Run returns. docs/lifecycle.md ("Workers") tells how a job moves through
// one.
type Worker struct {
	root    string
	handler Handler
	o       workerOptions
	mu      sync.Mutex
	busy    bool // Run is running

	stopNow     chan struct{} // closed by StopAndCancel
	stopNowOnce sync.Once
}

// WorkerOption configures a Worker.
type WorkerOption func(*workerOptions)

type workerOptions struct {
	parallel  int
	grace     time.Duration
	start     []StartOption
	logger    *slog.Logger
	gate      func(ctx context.Context) error
	untilIdle bool
	scanned   func() // tests only: called once the view's first full scan of the root has ended
}

// DefaultGrace is how long a stopping Worker waits for its running
// handlers before it cancels their contexts, unless WithGrace says
// otherwise.
const DefaultGrace = 10 * time.Second

// WithParallel sets how many handlers a Worker runs at once (default 1);
// n < 1 makes NewWorker fail with ErrInvalid. A job's end is recorded once
// its handler returns, while the next job may already be taken and
// started: besides n handlers, up to n jobs may be ending, each until its
// last status is written (durably) and its Run closed. So status.json may
// say running for up to 2n of a Worker's jobs at a time, and the ends of
// several jobs may be written in another order than their handlers
// returned.
func WithParallel(n int) WorkerOption { return func(o *workerOptions) { o.parallel = n } }

// WithGrace sets how long a stopping Worker waits for its running handlers
// before it cancels their contexts (default DefaultGrace); a negative d
// makes NewWorker fail with ErrInvalid.
func WithGrace(d time.Duration) WorkerOption { return func(o *workerOptions) { o.grace = d } }

// WithStartOptions sets the options each job is started with and the
// Worker looks with, as StartNext takes them: WithKinds, WithLease,
// WithHost, WithScanInterval, WithProgressInterval, WithSkipped.
func WithStartOptions(opts ...StartOption) WorkerOption {
	return func(o *workerOptions) { o.start = append(o.start, opts...) }
}

// WithLogger makes a Worker log each start, end, rescue and failure of its
// own to l; without it (or with nil) it is silent. An attempt's end is
// logged at Info, or at Warn with its error when it failed or was lost
// (retried or not).
func WithLogger(l *slog.Logger) WorkerOption { return func(o *workerOptions) { o.logger = l } }

// WithTakeGate makes a Worker call gate before it takes a job, once a slot
// is free, with a context that ends when the Worker stops taking jobs: once
// for each job it takes, and once more before the take that finds none
// and ends Run (a look that finds nothing while handlers run, with
// WithUntilIdle, does not call it again). The Worker takes the job only
// once gate has returned nil; an error stops the Worker taking jobs, and
// Run returns that error once its running handlers have returned (as after
// a stop by its context). gate runs on Run's goroutine, never twice at
// once; so each call after the first follows the take of one job, and a
// gate may wait for what that job's handler does (its command to start,
// say) before the next job is taken.
func WithTakeGate(gate func(ctx context.Context) error) WorkerOption {
	return func(o *workerOptions) { o.gate = gate }
}

// WithUntilIdle makes Run return (nil) once it finds no job it may start
// and none of its handlers runs: it looks again whenever one of them
// returns, or the root changes, and stops only when a look finds nothing
// while nothing runs. A job not yet due (its not_before, or a pending
// retry's retry_at, is later) is not waited for: it is left queued, for a
// later Worker. Run's context still stops it as usual.
func WithUntilIdle() WorkerOption { return func(o *workerOptions) { o.untilIdle = true } }

// NewWorker returns a Worker of the jobs under root, each run by h. root
// must be a directory (an *Error matching fs.ErrNotExist otherwise: a
// mistyped path must not wait for ever); h must not be nil, and the
// options valid (ErrInvalid, naming the option). Without WithHost among
// WithStartOptions', the host identity is HostID() as NewWorker reads it.
func NewWorker(root string, h Handler, opts ...WorkerOption) (*Worker, error) {
	const op = "new worker"
	o := workerOptions{parallel: 1, grace: DefaultGrace}
	for _, opt := range opts {
		opt(&o)
	}
	switch {
	case h == nil:
		return nil, errInvalid(op, root, invalid{subject: "handler", msg: "is nil", remedy: "give the function that runs a job"})
	case o.parallel < 1:
		return nil, errInvalid(op, root, invalid{subject: "parallel", found: o.parallel, supported: "1 or more", msg: fmt.Sprintf("%d runs no job", o.parallel)})
	case o.grace < 0:
		return nil, errInvalid(op, root, invalid{subject: "grace", found: o.grace, supported: "0 or more", msg: fmt.Sprintf("%v is negative", o.grace)})
	}
	so, err := newStartOptions(op, root, o.start)
	if err != nil {
		return nil, err
	}
	if !so.hostSet {
		// Read once: every run of the Worker records the same identity,
		// and no Start looks it up again.
		o.start = append(slices.Clip(o.start), WithHost(so.host))
	}
	if err := checkKinds(op, root, so.next.kinds); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, errIO(op, root, err, "cannot make the jobs root's path absolute", "give an absolute path")
	}
	if fi, err := os.Stat(abs); err != nil {
		return nil, errReadRoot(op, root, err)
	} else if !fi.IsDir() {
		return nil, errReadRoot(op, root, &fs.PathError{Op: "open", Path: root, Err: errors.New("not a directory")})
	}
	return &Worker{root: abs, handler: h, o: o, stopNow: make(chan struct{})}, nil
}

// ErrWorkerStopped is the cause (context.Cause) of a handler's context
// once its Worker stopped and its grace passed, or StopAndCancel was
// called. A handler that then returns an error without finishing its job
// has its job queued again at once (Run).
var ErrWorkerStopped = errors.New("jobstore: the worker stopped before the job ended")

// StopAndCancel makes the Worker stop taking jobs and cancel its running
// handlers' contexts at once (cause ErrWorkerStopped), as if Run's context
// had ended and the grace passed; Run returns nil once every handler has
// returned. It may be called from any goroutine, any number of times,
// while Run runs or before: a Worker stopped so takes no job again (a
// later Run returns nil at once).
func (w *Worker) StopAndCancel() {
	w.stopNowOnce.Do(func() { close(w.stopNow) })
}

// Run takes jobs and runs them until ctx is done (or StopAndCancel, a
// take gate's error, WithUntilIdle's end), then stops taking jobs, waits
// up to the grace for the running handlers, cancels the contexts of those
// still running, and returns once every handler has returned: nil after a
// stop by ctx, StopAndCancel or idleness, or the error that stopped it
// (an unreadable root, the gate's).
// A job interrupted so (its handler returned after the cancel without
// finishing it) is queued again at once: its attempt is kept as failed and
// interrupted, and counts against no MaxAttempts.
//
// Between looks it rescues jobs whose runner is gone, as Reconcile does:
// each scan it judges the runners of the running jobs it saw (by pid on
// this host, by lease elsewhere, across its scans: it never waits for a
// lease), and takes over those judged gone, which are queued again while
// they have attempts left (else marked lost). A handler that panics fails
// its attempt with the panic and its stack; the Worker goes on. Run may not
// be called again while it runs (ErrInvalid).
func (w *Worker) Run(ctx context.Context) error {
	const op = "run worker"
	w.mu.Lock()
	if w.busy {
		w.mu.Unlock()
		return errInvalid(op, w.root, invalid{subject: "worker", msg: "is running already", remedy: "run a Worker once at a time, or make another"})
	}
	w.busy = true
	w.mu.Unlock()
	defer func() { w.mu.Lock(); w.busy = false; w.mu.Unlock() }()

	so, _ := newStartOptions(op, w.root, w.o.start) // checked by NewWorker
	c := newNextCache(w.root)
	defer c.close()
	stopped, stop := context.WithCancelCause(context.Background())
	defer stop(nil)
	taking, stopTaking := context.WithCancel(ctx)
	defer stopTaking()
	go func() { // StopAndCancel ends the taking at once
		select {
		case <-w.stopNow:
			stopTaking()
		case <-taking.Done():
		}
	}()
	t := &taker{w: w, c: c, no: so.next, op: op, taking: taking, stopped: stopped,
		slots: make(chan struct{}, w.o.parallel), ending: make(chan struct{}, w.o.parallel), ended: make(chan struct{}, 1), done: make(chan struct{})}
	var rescuer sync.WaitGroup
	rescuer.Go(func() { w.rescueLoop(taking, c, so.next.scan) })
	defer rescuer.Wait()
	t.handlers.Go(t.take)
	select {
	case <-t.done:
	case <-taking.Done(): // the taking ends as soon as its goroutine sees it
	}
	stopTaking()
	w.drain(stopped, stop, &t.handlers)
	return t.err // set before every goroutine of t.handlers returned
}

// lookOnce is WithUntilIdle's take: one look at the root. It returns the
// job it started, or idle when it found none while no handler ran (Run
// then returns); otherwise, it found none while handlers run, and it
// waits for one of them to return, the root to change or taking to end
// before it returns (nil, false, nil) for another look.
func (w *Worker) lookOnce(taking context.Context, c *nextCache, no nextOptions, active *atomic.Int32, ended <-chan struct{}) (*Run, bool, error) {
	busy := active.Load() > 0 // before the look: a handler that returns after it signals ended
	var changed <-chan struct{}
	if !no.noEvents {
		changed = c.watch()
	}
	scans := c.scansEnded()
	run, err := c.startOldest(taking, true, no, w.o.start)
	if run == nil && err == nil && !busy && c.missedFirstScan(scans) {
		return nil, false, nil // idle only once the root was read whole: look again
	}
	if run != nil || err != nil || !busy {
		return run, run == nil && err == nil, err
	}
	select {
	case <-ended:
	case <-changed:
	case <-taking.Done():
	}
	return nil, false, nil
}

// drain waits for the running handlers, up to the grace, then cancels
// their contexts and waits for them to return.
func (w *Worker) drain(stopped context.Context, stop context.CancelCauseFunc, handlers *sync.WaitGroup) {
	done := make(chan struct{})
	go func() { handlers.Wait(); close(done) }()
	grace := time.NewTimer(w.o.grace)
	defer grace.Stop()
	select {
	case <-done:
		return
	case <-grace.C:
		w.log(slog.LevelInfo, "grace over: cancelling the running jobs", "grace", w.o.grace)
	case <-w.stopNow:
		w.log(slog.LevelInfo, "stopped and cancelled: cancelling the running jobs")
	}
	stop(ErrWorkerStopped)
	<-done
}

// rescueLoop looks at the root every scan interval until ctx is done and
// judges the runner of each running job it saw, as Reconcile does: those
// judged gone are taken over (queued again while they have attempts left,
// else marked lost). A runner on another host whose lease has not yet been
// watched for a whole lease is judged again at a later pass, never waited
// for.
func (w *Worker) rescueLoop(ctx context.Context, c *nextCache, scan time.Duration) {
	if scan <= 0 {
		scan = DefaultScanInterval
	}
	tick := time.NewTicker(scan)
	defer tick.Stop()
	told := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if w.o.scanned != nil && !told && c.scansEnded() > 0 {
			told = true
			w.o.scanned()
		}
		w.rescue(c.runningDirs())
	}
}

// rescue judges the runners of dirs, running jobs, and takes over those
// that are gone.
func (w *Worker) rescue(dirs []JobDir) {
	for _, dir := range dirs {
		changed, _, err := reconcileJob(dir)
		switch {
		case err != nil && !errors.Is(err, ErrNotJob):
			w.log(slog.LevelWarn, "rescue failed", "job", dir.ID(), "err", err)
		case changed:
			state := State("")
			if st, _ := ReadStatus(dir); st != nil {
				state = st.State
			}
			w.log(slog.LevelInfo, "rescued a job whose runner is gone", "job", dir.ID(), "state", state)
		}
	}
}

// work runs the handler for run and returns the end of its attempt: the
// record of how it ended, as the handler's result and its context's cause
// (as of the handler's return) say, and the Run's Close. A handler that
// calls runtime.Goexit ends nothing but the Run, closed as its goroutine
// unwinds. stopped ends when the Worker's grace is over.
func (w *Worker) work(stopped context.Context, run *Run) (end func()) {
	id := run.Dir().ID()
	logs := w.o.logger != nil // without a logger, no line is made, nor what it would say
	if logs {
		st := run.Status()
		w.log(slog.LevelInfo, "started", "job", id, "kind", run.Spec().Kind, "attempt", NumberAttempts(run.Spec(), &st).Current)
	}
	ctx, cancel := context.WithCancelCause(run.Context())
	release := context.AfterFunc(stopped, func() { cancel(context.Cause(stopped)) })
	done := func() {
		release()
		cancel(nil)
		_ = run.Close()
	}
	returned := false
	defer func() {
		if !returned {
			done()
		}
	}()
	err := w.call(ctx, run)
	cause := context.Cause(ctx)
	returned = true
	return func() {
		defer done()
		w.end(run, id, logs, err, cause)
	}
}

// end records the end of run's attempt, as the handler's err and its
// context's cause say, and logs it.
func (w *Worker) end(run *Run, id string, logs bool, err, cause error) {
	if err := run.endWith(err, cause); err != nil {
		w.log(slog.LevelWarn, "could not record the job's end", "job", id, "err", err)
	}
	if !logs {
		return
	}
	st := run.Status()
	level, why := slog.LevelInfo, endedWith(&st)
	if why != "" {
		level = slog.LevelWarn
	}
	w.log(level, "ended", "job", id, "state", st.State, "error", why)
}

// endedWith is what went wrong in the attempt whose end st records: the
// status's error, or, once the job is queued again for a retry, the error
// its attempts keep for the attempt that ended ("" if none: it succeeded).
func endedWith(st *JobStatus) string {
	if st.State == Queued && len(st.Attempts) > 0 {
		return st.Attempts[len(st.Attempts)-1].Error
	}
	return st.Error
}

// call runs the handler, turning a panic into an error that carries it and
// its stack.
func (w *Worker) call(ctx context.Context, run *Run) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("panic: %v\n\n%s", v, debug.Stack())
		}
	}()
	return w.handler(ctx, run)
}

func (w *Worker) log(level slog.Level, msg string, args ...any) {
	if w.o.logger != nil {
		w.o.logger.Log(context.Background(), level, msg, append([]any{"root", w.root}, args...)...)
	}
}
