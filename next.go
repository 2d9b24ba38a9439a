package jobstore

import (
	"context"
	"errors"
	"path/filepath"
	"runtime"
	"slices"
	"time"
)

// StartNext starts the first startable job under root and returns its Run,
// as Start does: among the queued jobs that are due (no not_before or
// retry_at later than now), have no cancel request and whose kind is one
// of WithKinds' (any kind without it), the highest priority, then the
// earliest submitted_at, then the smallest ID. Of several StartNext calls
// and Workers, in this process or in others on any host, exactly one
// starts a given job; a job another runner won, that has a cancel request
// or that ended meanwhile is passed over, and one whose Start fails
// otherwise is reported to WithSkipped's function and not tried again for
// a minute by the same view (each plain call has its own: see below). A
// job without status.json is never started.
//
// When no job is startable it waits until one is (a file system event, a
// job's due time, or every WithScanInterval) or ctx is done, and then
// returns an *Error that matches ctx.Err() (ErrorCode "interrupted" or
// "timeout"); with ctx already done it looks once, once the root was read
// whole. A missing or unreadable root is an error at once.
//
// Each call makes a view of root (its file system watch, its scan of the
// root) and ends it before it returns: nothing of the call remains, and no
// call learns from another. A program that calls StartNext in a loop keeps
// a view between calls with OpenView, or runs a Worker; what a look costs
// with and without one is in docs/lifecycle.md ("Workers").
func StartNext(ctx context.Context, root string, opts ...StartOption) (*Run, error) {
	const op = "start next"
	o, abs, err := nextArgs(op, root, opts)
	if err != nil {
		return nil, err
	}
	c := newNextCache(abs)
	defer c.close()
	c.firstLookAlone = ctx.Err() == nil
	return c.next(ctx, op, root, o.next, opts)
}

// nextArgs checks StartNext's options and makes root absolute.
func nextArgs(op, root string, opts []StartOption) (startOptions, string, error) {
	o, err := newStartOptions(op, root, opts)
	if err != nil {
		return o, "", err
	}
	if err := checkKinds(op, root, o.next.kinds); err != nil {
		return o, "", err
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return o, "", errIO(op, root, err, "cannot make the jobs root's path absolute", "give an absolute path")
	}
	return o, abs, nil
}

// next is StartNext's loop on c: look, start the best candidate, or wait
// for a change, a job's due time or the scan interval.
func (c *nextCache) next(ctx context.Context, op, root string, no nextOptions, opts []StartOption) (*Run, error) {
	once := ctx.Err() != nil
	var tick *time.Ticker
	if !once {
		scan := no.scan
		if scan <= 0 {
			scan = DefaultScanInterval
		}
		tick = time.NewTicker(scan)
		defer tick.Stop()
	}
	for {
		// Taken before the look, so that a change during the look or
		// between it and the wait is not missed.
		var changed <-chan struct{}
		alone := c.lookAlone()
		if !once && !no.noEvents && !alone {
			changed = c.watch()
		}
		scans := c.scansEnded()
		run, err := c.startOldest(ctx, once, no, opts)
		if run != nil || err != nil {
			return run, err
		}
		if once && c.missedFirstScan(scans) {
			continue // the only look: not before the root was read whole once
		}
		if once || ctx.Err() != nil {
			return nil, nextCtxError(op, root, ctx)
		}
		if alone {
			c.endLookAlone()
			continue // look again, watched this time, before waiting
		}
		if changed != nil && c.follow() {
			continue // a directory followed only now may have completed meanwhile
		}
		due := newDueTimer(c.wakeAt())
		select {
		case <-changed:
		case <-tick.C:
		case <-due.C():
		case <-ctx.Done():
			due.Stop()
			return nil, nextCtxError(op, root, ctx)
		}
		due.Stop()
	}
}

// dueTimer is a timer for the moment the earliest job not yet due becomes
// due: a waiting StartNext or Worker starts it then, not at its next scan.
type dueTimer struct{ t *time.Timer }

// newDueTimer arms a timer for dueLead before at; a zero at arms none (C
// is then nil).
func newDueTimer(at time.Time) dueTimer {
	if at.IsZero() {
		return dueTimer{}
	}
	return dueTimer{time.NewTimer(time.Until(at) - dueLead)}
}

// waitDue returns once this host's clock has reached due (a look takes a
// job due within dueLead), or after dueLead at most, should the clock be
// set back meanwhile: Start then refuses the job as not yet due. It yields
// the processor meanwhile rather than sleep, which could overshoot by as
// much again.
func waitDue(due time.Time) {
	for begun := time.Now(); time.Now().Before(due) && time.Since(begun) < dueLead; {
		runtime.Gosched()
	}
}

func (w dueTimer) C() <-chan time.Time {
	if w.t == nil {
		return nil
	}
	return w.t.C
}

func (w dueTimer) Stop() {
	if w.t != nil {
		w.t.Stop()
	}
}

// checkKinds refuses an empty kind among WithKinds'.
func checkKinds(op, root string, kinds []string) error {
	for _, k := range kinds {
		if k == "" {
			return errInvalid(op, root, invalid{subject: "kinds", found: k, supported: "non-empty kinds", msg: "an empty kind matches no job", remedy: "name the kinds of job to start, or none for every kind"})
		}
	}
	return nil
}

// nextCtxError is StartNext's error when ctx ends: it unwraps to ctx.Err().
func nextCtxError(op, root string, ctx context.Context) error {
	msg := "stopped waiting for a job to start"
	if cause := context.Cause(ctx); cause != nil && cause != ctx.Err() {
		msg += " (" + cause.Error() + ")"
	}
	return errBecause(op, root, ctx.Err(), msg, "")
}

// startOldest makes one look at the root and tries Start on each startable
// job, best first, until one starts. A job whose directory changed since
// it was read is read again by another look first. With once unset, it
// stops (nil, nil) as soon as ctx is done. No lock is held across a file
// system call but c.looking, by the look: the view's memory lock (c.mu) is
// taken only to change or take from what it holds, and the check and
// Start of the job taken are made without either, so that other calls
// take and settle meanwhile.
func (c *nextCache) startOldest(ctx context.Context, once bool, no nextOptions, opts []StartOption) (*Run, error) {
	rd, err := c.view.open()
	if err != nil {
		return nil, errReadRoot("start next", c.root, err)
	}
	defer rd.Close()
	if len(no.kinds) > 0 {
		opts = append(slices.Clip(opts), func(o *startOptions) { o.picked = no.kinds })
	}
	for {
		began, reports := c.lookIn(rd)
		no.report(reports)
		for {
			if !once && ctx.Err() != nil {
				return nil, nil
			}
			e, due := c.takeBest(no.kinds)
			if e == nil {
				return nil, nil
			}
			if !c.current(rd, e, began) {
				c.settle(e, errNotCurrent)
				break // look again: it reads e
			}
			dir := JobDir(filepath.Join(c.root, e.name))
			handed := no.handOff != nil
			if handed {
				no.handOff()
			}
			waitDue(due)
			run, err := Start(dir, opts...)
			if err == nil {
				c.started(e, run)
				return run, nil
			}
			c.settle(e, err)
			if !passedOver(err) && !errors.Is(err, errNotCurrent) {
				no.report([]nextReport{{dir, err}})
			}
			if handed {
				return nil, errHandedOff
			}
		}
	}
}

// errHandedOff ends a Worker's take whose Start failed after the taking
// was handed to another goroutine (nextOptions.handOff): that one looks on.
var errHandedOff = errors.New("the taking was handed off")

func (no nextOptions) report(rs []nextReport) {
	if no.skipped == nil {
		return
	}
	for _, r := range rs {
		no.skipped(r.dir, r.err)
	}
}
