package fsevents

import (
	"os"
	"path/filepath"
	"time"
)

// An Await waits for a name to appear in a directory (a file published
// there by a rename or a link, say) and reports it once.
//
// Appearance is noticed two ways: the directory's events (the directory is
// watched, not the name, which does not exist yet), and a look every poll
// interval as a safety net, for filesystems that deliver no event (NFS,
// SMB, FUSE written by another host) and watches the OS refuses. The name
// exists if an lstat of it succeeds, whatever it is.
type Await struct {
	done   chan struct{} // closed by Stop
	exited chan struct{} // closed when the goroutine has released everything
}

// StartAwait watches dir for name and calls found once it exists. events
// false leaves the poll alone.
//
// The watch is in place, and name has been looked for once, when
// StartAwait returns: a name already there is reported (found may run
// before StartAwait returns), and one that appears at any later moment is
// seen by an event or, at the latest, by the poll. found runs on the
// Await's goroutine and must not call Stop.
func StartAwait(dir, name string, poll time.Duration, events bool, found func()) *Await {
	a := &Await{done: make(chan struct{}), exited: make(chan struct{})}
	sink, sub := awaitWatch(dir, name, events)
	path := filepath.Join(dir, name)
	if there(path) {
		if sub != nil {
			sub.Cancel()
		}
		close(a.exited)
		found()
		return a
	}
	go a.run(path, poll, sink, sub, found)
	return a
}

// StartAwaitLater is StartAwait for a caller that must not wait for the
// watch: the watch is put in place on the Await's goroutine, which then
// looks for name once (a name there already, or one that appears before
// the watch is in place, is reported then), so StartAwaitLater itself
// costs a goroutine and no system call. found runs on the Await's
// goroutine and must not call Stop.
func StartAwaitLater(dir, name string, poll time.Duration, events bool, found func()) *Await {
	a := &Await{done: make(chan struct{}), exited: make(chan struct{})}
	go func() {
		sink, sub := awaitWatch(dir, name, events)
		path := filepath.Join(dir, name)
		if !there(path) {
			a.run(path, poll, sink, sub, found)
			return
		}
		defer close(a.exited)
		if sub != nil {
			sub.Cancel()
		}
		select {
		case <-a.done:
		default:
			found()
		}
	}()
	return a
}

// Stop ends the wait and returns once its goroutine and OS watch are
// released; found is not called after Stop returns. Stopping twice is
// fine.
func (a *Await) Stop() {
	select {
	case <-a.done:
	default:
		close(a.done)
	}
	<-a.exited
}

func (a *Await) run(path string, poll time.Duration, sink *Sink, sub *Subscription, found func()) {
	defer close(a.exited)
	var wake <-chan struct{} // nil: the poll alone
	if sub != nil {
		defer sub.Cancel()
		wake = sink.Ready()
	}
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		select {
		case <-a.done:
			return
		case <-wake:
			sink.Take(nil)
		case <-tick.C:
		}
		if there(path) {
			break
		}
	}
	select {
	case <-a.done:
	default:
		found()
	}
}

// awaitWatch watches dir for name into a new sink, if events; its
// subscription is nil when it does not or the OS gives no events.
func awaitWatch(dir, name string, events bool) (*Sink, *Subscription) {
	if !events {
		return nil, nil
	}
	sink := NewSink()
	return sink, Subscribe(dir, []string{name}, sink)
}

func there(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
