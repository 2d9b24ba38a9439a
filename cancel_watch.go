package jobstore

import (
	"os"
	"path/filepath"
	"time"
)

// cancelPollInterval is the safety poll of a cancel watch: how late a cancel
// request is seen where the filesystem delivers no events (NFS, SMB, FUSE
// written by another host) or no watch could be had.
const cancelPollInterval = time.Second

// cancelWatch waits for cancel.json to appear in a job directory and calls
// found once when it does. It is the one place that knows how the
// appearance is detected: directory events from the process's one shared
// OS watcher (watch_events.go; the directory is watched, not the file,
// since the file is published by a rename or a link) plus a poll every
// interval as a safety net. A watch that cannot be had (no inotify watch
// left, an unsupported filesystem) leaves the poll alone, silently; an
// event-queue overflow wakes the watch to look.
//
// The existence of the name is checked after the watch is in place, so a
// request published at any moment after startCancelWatch is seen: before
// the check by the check, after it by an event or the poll.
type cancelWatch struct {
	ready  chan struct{} // closed once the watch is in place and has looked
	done   chan struct{} // closed by stop
	exited chan struct{} // closed when the goroutine has released everything
}

// startCancelWatch starts watching dir; events false means poll only.
func startCancelWatch(dir JobDir, interval time.Duration, events bool, found func()) *cancelWatch {
	w := &cancelWatch{ready: make(chan struct{}), done: make(chan struct{}), exited: make(chan struct{})}
	go w.run(dir, interval, events, found)
	return w
}

// stop ends the watch and waits until its goroutine and OS handle are
// released (found is not called after stop returns). Stopping twice is fine.
func (w *cancelWatch) stop() {
	select {
	case <-w.done:
	default:
		close(w.done)
	}
	<-w.exited
}

func (w *cancelWatch) run(dir JobDir, interval time.Duration, events bool, found func()) {
	defer close(w.exited)
	readied := false
	defer func() {
		if !readied {
			close(w.ready)
		}
	}()
	var wake <-chan struct{} // nil: the poll alone
	if events {
		if abs, err := filepath.Abs(string(dir)); err == nil {
			if sub := subscribe(abs, CancelFile); sub != nil {
				defer sub.cancel()
				wake = sub.wake
			}
		}
	}
	path := dir.CancelPath()
	there := func() bool {
		_, err := os.Lstat(path)
		return err == nil
	}
	if there() {
		w.report(found)
		return
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	close(w.ready)
	readied = true
	for {
		select {
		case <-w.done:
			return
		case <-wake:
			if !there() {
				continue
			}
		case <-tick.C:
			if !there() {
				continue
			}
		}
		w.report(found)
		return
	}
}

// report calls found unless the watch was stopped meanwhile.
func (w *cancelWatch) report(found func()) {
	select {
	case <-w.done:
	default:
		found()
	}
}
