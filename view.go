package jobstore

import (
	"context"
	"io/fs"
	"path/filepath"
	"sync"

	"github.com/axqua/jobstore/internal/dirstamp"
)

// View is a view of one jobs root that its caller keeps between calls and
// closes, for a program that calls StartNext in a loop without a Worker:
// the jobs its looks read, its file system watch and its scan of the root
// are kept from one of its StartNext calls to the next, so that a look
// reads only what changed since the last (docs/lifecycle.md, "Workers"),
// and its WatchRoot channels share that watch and the root's listing
// (docs/mechanisms.md, "One view of a root").
// A View is safe for use by several goroutines at once; its StartNext
// calls start each job once, as StartNext does, against each other and
// against every other runner in this process or on another host.
//
// Close ends every StartNext call and WatchRoot channel of the view still
// in progress and returns once nothing of the view remains: no goroutine,
// no file system watch, no open descriptor. Nothing of a view lives on
// after Close, nor anywhere but in the View: a View that is never closed
// keeps its watch and its goroutines until the process ends.
type View struct {
	root string    // as given to OpenView: errors name it so
	view *rootView // the one watch and listing of root its calls and channels share
	c    *nextCache

	mu     sync.Mutex
	closed bool
	calls  sync.WaitGroup // StartNext calls and WatchRoot goroutines in progress

	done   context.Context // done once Close began
	cancel context.CancelFunc
}

// OpenView makes a view of root. It reads nothing under root yet (the
// first StartNext does) but returns an *Error at once if root cannot be
// read: missing, not a directory, or without read and search permission.
func OpenView(root string) (*View, error) {
	const op = "open view"
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, errIO(op, root, err, "cannot make the jobs root's path absolute", "give an absolute path")
	}
	d, err := dirstamp.Open(abs)
	if err != nil {
		return nil, errReadRoot(op, root, err)
	}
	d.Close()
	done, cancel := context.WithCancel(context.Background())
	rv := newRootView(abs)
	return &View{root: root, view: rv, c: newNextCacheOn(rv), done: done, cancel: cancel}, nil
}

// Root returns the root as given to OpenView.
func (v *View) Root() string { return v.root }

// StartNext is StartNext on the view's root, with the view's knowledge of
// it: the first call reads the root (a call with ctx already done reads
// it whole first), later ones what changed since. It takes StartNext's
// options, each call its own. A call still waiting when Close is called
// returns an *Error that matches fs.ErrClosed, as does every call after
// Close; a Run it returned is the caller's and Close leaves it alone. The
// view does not look at a job it started until that job's Run is closed
// (its process writes the job's records): close every Run, after its
// Finish, or the view never learns that its job was queued again.
func (v *View) StartNext(ctx context.Context, opts ...StartOption) (*Run, error) {
	const op = "start next"
	o, _, err := nextArgs(op, v.root, opts)
	if err != nil {
		return nil, err
	}
	if !v.begin() {
		return nil, v.errClosed(op)
	}
	defer v.calls.Done()
	bounded, stop := v.bound(ctx)
	defer stop()
	run, err := v.c.next(bounded, op, v.root, o.next, opts)
	if err != nil && ctx.Err() == nil && v.done.Err() != nil {
		return nil, v.errClosed(op)
	}
	return run, err
}

// WatchRoot is WatchRoot on the view's root, with the same updates, errors
// and options; its channel is closed when ctx is done or the view is
// closed, whichever comes first, and Close returns only once it is closed
// and everything it held is released. After Close it returns an *Error
// that matches fs.ErrClosed. The channel shares the view's watch of the
// root and its listing with the view's StartNext calls (one subscription
// of each directory both follow, one listing of the root per change); it
// keeps the jobs it reports apart from those StartNext's looks read.
func (v *View) WatchRoot(ctx context.Context, opts ...WatchOption) (<-chan RootUpdate, error) {
	const op = "watch root"
	if !v.begin() {
		return nil, v.errClosed(op)
	}
	w, err := newRootWatch(v.root, watchOptionsOf(opts), v.view)
	if err != nil {
		v.calls.Done()
		return nil, err
	}
	bounded, stop := v.bound(ctx)
	go func() {
		defer v.calls.Done()
		defer stop()
		w.loop(bounded)
	}()
	return w.out, nil
}

// Close ends the view: every StartNext call of it still waiting returns,
// every channel of its WatchRoot is closed, and its watch, scan and
// goroutines end; Close returns once they have. It returns nil, and does
// nothing when called again. It must not be called from a function a
// StartNext call of the view calls (WithSkipped's): that call waits for
// Close, and Close for it.
func (v *View) Close() error {
	v.mu.Lock()
	if v.closed {
		v.mu.Unlock()
		return nil
	}
	v.closed = true
	v.mu.Unlock()
	v.cancel()
	v.calls.Wait()
	v.c.close()
	v.view.end()
	return nil
}

// begin counts a call in progress unless the view is closed, and reports
// whether it did; the caller calls v.calls.Done when it ends.
func (v *View) begin() bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.closed {
		return false
	}
	v.calls.Add(1)
	return true
}

// bound returns a context done when ctx is or when Close begins, and the
// function that releases it.
func (v *View) bound(ctx context.Context) (context.Context, func()) {
	bounded, cancel := context.WithCancel(ctx)
	unlink := context.AfterFunc(v.done, cancel)
	return bounded, func() { unlink(); cancel() }
}

func (v *View) errClosed(op string) error {
	return errBecause(op, v.root, fs.ErrClosed, "the view is closed", "open another view with OpenView")
}
