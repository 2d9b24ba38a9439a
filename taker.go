package jobstore

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
)

// taker is one Run's taking of jobs. One goroutine at a time takes jobs
// (the taker); the one that finds a job runs the job's handler itself, so
// that nothing stands between the job's start and its handler but the
// handler's context. It hands the taking to a new goroutine first if a
// slot is free; if none is, the first of the running handlers to return
// frees its slot and hands the taking to a new goroutine while its own
// writes the job's end (run): with WithParallel(1), the default, the next
// job is taken and started while the last one's end is written.
type taker struct {
	w       *Worker
	c       *nextCache
	no      nextOptions
	op      string
	taking  context.Context // done: take no more jobs
	stopped context.Context // done: the handlers' contexts end (drain)
	slots   chan struct{}   // one per handler running or about to
	ending  chan struct{}   // one per job whose handler returned and whose end is being written
	ended   chan struct{}   // buffered 1: a handler returned (WithUntilIdle looks again)
	done    chan struct{}   // closed when the taking has ended, err set

	active   atomic.Int32
	handlers sync.WaitGroup // every goroutine that takes or runs a handler
	gated    bool           // the gate allowed a take that has not yet found a job (the taker's)
	err      error          // what ended the taking (the taker's, until done)

	mu     sync.Mutex
	vacant bool // nobody takes: every slot was taken; the next handler to return takes over
}

// take is the taker's part: find a job, hand the taking on, run the
// handler (run, which hands the taking on again if it was left vacant).
// Without WithTakeGate the taking is handed on as soon as a job is picked,
// before its Start (nextOptions.handOff), so that the Starts of several jobs, each
// a few fsyncs, overlap.
func (t *taker) take() {
	run, handed := t.find()
	if run == nil {
		return
	}
	if !handed {
		t.passTaking()
	}
	t.run(run)
}

// passTaking hands the taking on: to a new goroutine if a slot is free (it
// reports true then), else to the first running handler to return
// (vacant), so that a slot freed while this goroutine starts a job is
// taken at once, not after that Start.
func (t *taker) passTaking() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.slots) >= cap(t.slots) {
		t.vacant = true
		return false
	}
	t.handlers.Go(t.take)
	return true
}

// handedStartFailed ends a goroutine that handed the taking on and whose
// Start then failed: it is no taker any more, so it releases its slot
// (handing the taking to a new goroutine if it was left vacant) and wakes
// a WithUntilIdle look that waits for a job to end.
func (t *taker) handedStartFailed() {
	t.freeSlot()
	t.over()
}

// freeSlot releases this goroutine's slot and, if the taking was vacant (every
// slot was taken), hands it to a new goroutine. Never after end: only a
// taker ends the taking, and none exists while it is vacant.
func (t *taker) freeSlot() {
	t.mu.Lock()
	<-t.slots
	vacant := t.vacant
	t.vacant = false
	t.mu.Unlock()
	if vacant {
		t.handlers.Go(t.take)
	}
}

// over counts a job out of the active ones, and wakes a WithUntilIdle look
// that waits for a job to end.
func (t *taker) over() {
	t.active.Add(-1)
	select {
	case t.ended <- struct{}{}:
	default:
	}
}

// run runs run's handler, releases its slot and then writes the job's end,
// while another goroutine takes the next job if the taking was vacant: the
// end's fsyncs and those of the next Start overlap. At most cap(t.ending)
// ends are written at once; a handler that returns while that many are
// holds its slot until one is done. The job counts as active (a
// WithUntilIdle look is busy) until its end is written. A handler that
// calls runtime.Goexit has its Run closed (work) and its slot freed as the
// goroutine unwinds.
func (t *taker) run(run *Run) {
	returned := false
	defer func() {
		if !returned {
			t.freeSlot()
			t.over()
		}
	}()
	end := t.w.work(t.stopped, run)
	returned = true
	t.ending <- struct{}{}
	t.freeSlot()
	if h := endSeam.Load(); h != nil {
		(*h)(run.Dir().ID())
	}
	end()
	<-t.ending
	t.over()
}

// endSeam, when set (by tests only), runs before a job's end is written,
// once its handler returned and its slot was freed.
var endSeam atomic.Pointer[func(id string)]

// find takes a slot and finds a job to run; nil when the taking has ended
// (t.done), or when this goroutine handed the taking on and the Start
// failed. handed reports that the taking was handed on.
func (t *taker) find() (run *Run, handed bool) {
	w := t.w
	no := t.no
	if w.o.gate == nil && cap(t.slots) > 1 {
		no.handOff = func() {
			handed = true
			t.active.Add(1) // a WithUntilIdle look is busy while the job starts
			if t.passTaking() {
				// The new taker waits on this goroutine's P, which the
				// Start about to run here keeps through its short calls
				// until its first fsync: up to a millisecond or two in
				// which no job is taken. Yield, so that the taking goes on
				// at once and the Start after it.
				runtime.Gosched()
			}
		}
	}
	for {
		select {
		case t.slots <- struct{}{}:
		case <-t.taking.Done():
		}
		if t.taking.Err() != nil {
			t.end(nil)
			return nil, false
		}
		if w.o.gate != nil && !t.gated {
			if err := w.o.gate(t.taking); err != nil || t.taking.Err() != nil {
				<-t.slots
				t.end(err)
				return nil, false
			}
			t.gated = true
		}
		var err error
		if w.o.untilIdle {
			var idle bool
			run, idle, err = w.lookOnce(t.taking, t.c, no, &t.active, t.ended)
			if run == nil && err == nil && !idle {
				<-t.slots
				continue
			}
		} else {
			run, err = t.c.next(t.taking, t.op, w.root, no, w.o.start)
		}
		if handed {
			if run == nil {
				t.handedStartFailed()
			}
			return run, true // counted active by the hand-off
		}
		if run == nil {
			<-t.slots
			if t.taking.Err() != nil {
				err = nil // stopped by ctx or StopAndCancel, while looking
			}
			t.end(err)
			return nil, false
		}
		t.gated = false
		t.active.Add(1)
		return run, false
	}
}

// end ends the taking with err. Only the taker calls it, so nobody is
// left to take over: the taking is vacant only while no taker exists.
func (t *taker) end(err error) {
	t.err = err
	close(t.done)
}
