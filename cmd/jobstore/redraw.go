package main

import "time"

// redrawGap is the least time between two redraws on a terminal: at most 10
// a second. A runner may write its status hundreds of times a second; a
// screen redrawn that often costs the terminal more than it shows anyone.
const redrawGap = 100 * time.Millisecond

// redrawGate spaces a display's redraws at least gap apart, the latest
// content winning: a redraw asked for too soon is deferred, C fires when it
// is due, and the caller then draws whatever is latest by that time. A
// display's last redraw (a job ended, the command is leaving) does not ask:
// it is drawn at once, and only it may follow the previous one by less
// than gap.
//
// It is used by one goroutine.
type redrawGate struct {
	gap     time.Duration
	last    time.Time   // when the last redraw was let through (zero: never)
	timer   *time.Timer // stopped unless waiting
	waiting bool        // a deferred redraw is due when timer fires
}

func newRedrawGate(gap time.Duration) *redrawGate {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &redrawGate{gap: gap, timer: t}
}

// ask reports whether a redraw may happen now. If not, it makes sure C
// fires when one may; the caller keeps its content to draw then.
func (g *redrawGate) ask() bool {
	if g.waiting {
		return false
	}
	if wait := g.gap - time.Since(g.last); !g.last.IsZero() && wait > 0 {
		g.timer.Reset(wait)
		g.waiting = true
		return false
	}
	g.last = time.Now()
	return true
}

// C delivers the time a deferred redraw is due; nil (never ready) when
// none waits, so that it can sit in a select.
func (g *redrawGate) C() <-chan time.Time {
	if !g.waiting {
		return nil
	}
	return g.timer.C
}

// fired records that C fired: the caller redraws now.
func (g *redrawGate) fired() {
	g.waiting = false
	g.last = time.Now()
}

// stop drops a deferred redraw and releases the timer.
func (g *redrawGate) stop() {
	g.timer.Stop()
	g.waiting = false
}
