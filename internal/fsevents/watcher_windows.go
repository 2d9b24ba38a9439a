package fsevents

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"unsafe"

	"github.com/fsnotify/fsnotify"
	"golang.org/x/sys/windows"
)

// osWatcher is the hub's OS watcher on Windows: ReadDirectoryChangesW on
// one completion port, read by one goroutine locked to its thread, which
// also issues, cancels and ends every read.
//
// It is not fsnotify's Windows backend, which can close a directory's
// handle twice: a read that completed before a Remove is handled after
// it, and the read it restarts on the closed handle fails and closes it
// again. Windows hands a closed handle's number to the next caller, most
// often the Go runtime (an M's event), so the second close kills the
// process later from a stack that names neither ("setevent failed;
// errno=6"). Here a watch's handle is closed exactly once, by the reader,
// when the last read issued on it has completed: a Remove or a Close
// cancels the read and waits for that.
//
// Events are fsnotify's type, with Op Create, Remove, Write or Rename and
// Name the entry's path (the directory's own, when the directory is gone);
// an overflowed buffer sends fsnotify.ErrEventOverflow on Errors.
type osWatcher struct {
	Events chan fsnotify.Event
	Errors chan error

	port windows.Handle
	done chan struct{} // closed when the reader has returned

	// closeHandle closes a watch's handle: windows.CloseHandle, or a
	// test's count of closes.
	closeHandle func(windows.Handle) error

	mu      sync.Mutex
	reqs    []*watchReq // for the reader, which a wake-up packet sends to them
	closing bool        // Close was called: no request is taken
}

// watchReq is one Add, Remove or Close, done by the reader.
type watchReq struct {
	op    int // reqAdd, reqRemove, reqClose
	path  string
	reply chan error // buffered 1
}

const (
	reqAdd = iota
	reqRemove
	reqClose
)

// dirWatchOS is one directory's watch; only the reader touches it.
type dirWatchOS struct {
	ov      windows.Overlapped // the read in flight: its address names the watch in a completion
	h       windows.Handle
	path    string
	buf     []byte
	pending bool         // a read is in flight on h
	ending  bool         // removed: h is closed once no read is in flight
	waiting []chan error // Removes waiting for h to be closed
}

// readerState is what the reader alone touches.
type readerState struct {
	watches map[string]*dirWatchOS              // by path: the watches Add made and nothing ended
	open    map[*windows.Overlapped]*dirWatchOS // by read: every watch whose handle is open
}

// notifyFilter: names (files and directories) made, removed or renamed,
// and writes: what fsnotify's Add asks for.
const notifyFilter = windows.FILE_NOTIFY_CHANGE_FILE_NAME | windows.FILE_NOTIFY_CHANGE_DIR_NAME |
	windows.FILE_NOTIFY_CHANGE_LAST_WRITE

// notifyBuffer is the size of each watch's buffer: ReadDirectoryChangesW
// drops what does not fit (the read completes with no bytes: an overflow).
const notifyBuffer = 64 << 10

func newOSWatcher() (*osWatcher, error) {
	return newOSWatcherClosing(windows.CloseHandle)
}

func newOSWatcherClosing(closeHandle func(windows.Handle) error) (*osWatcher, error) {
	port, err := windows.CreateIoCompletionPort(windows.InvalidHandle, 0, 0, 0)
	if err != nil {
		return nil, os.NewSyscallError("CreateIoCompletionPort", err)
	}
	w := &osWatcher{
		Events: make(chan fsnotify.Event, 64), Errors: make(chan error, 1),
		port: port, done: make(chan struct{}), closeHandle: closeHandle,
	}
	go w.reader()
	return w, nil
}

// Add watches dir's entries; a directory watched already is kept as it is.
func (w *osWatcher) Add(dir string) error { return w.do(reqAdd, dir) }

// Remove ends dir's watch and returns once its handle is closed.
func (w *osWatcher) Remove(dir string) error { return w.do(reqRemove, dir) }

// Close ends every watch, waits for the reader and closes Events and
// Errors. Closing twice is fine.
func (w *osWatcher) Close() error {
	err := w.do(reqClose, "")
	switch {
	case errors.Is(err, fsnotify.ErrClosed):
		err = nil // closed already, or closing: the reader ends all the same
	case err != nil:
		return err // the reader could not be woken: it never takes the Close
	}
	<-w.done
	return err
}

func (w *osWatcher) do(op int, path string) error {
	r := &watchReq{op: op, path: filepath.Clean(path), reply: make(chan error, 1)}
	w.mu.Lock()
	if w.closing {
		w.mu.Unlock()
		return fsnotify.ErrClosed
	}
	w.closing = op == reqClose
	w.reqs = append(w.reqs, r)
	w.mu.Unlock()
	if err := windows.PostQueuedCompletionStatus(w.port, 0, 0, nil); err != nil {
		// The reader cannot be woken: nothing was done (Close aside, which
		// the reader never takes now; its port leaks).
		return os.NewSyscallError("PostQueuedCompletionStatus", err)
	}
	return <-r.reply
}

// reader runs every request and every completion, on one OS thread: the
// thread that issues a read need not be the one that cancels it
// (CancelIoEx), but a thread's exit may cancel the reads it issued.
func (w *osWatcher) reader() {
	runtime.LockOSThread()
	defer close(w.done)
	rs := &readerState{watches: map[string]*dirWatchOS{}, open: map[*windows.Overlapped]*dirWatchOS{}}
	var closeReply chan error
	for {
		var n uint32
		var key uintptr
		var ov *windows.Overlapped
		qErr := windows.GetQueuedCompletionStatus(w.port, &n, &key, &ov, windows.INFINITE)
		switch {
		case ov == nil && qErr != nil:
			// The port itself failed: nothing more can be read. Every
			// request from now on is refused; the watches' handles stay.
			w.mu.Lock()
			w.closing = true
			reqs := w.reqs
			w.reqs = nil
			w.mu.Unlock()
			for _, r := range reqs {
				r.reply <- os.NewSyscallError("GetQueuedCompletionStatus", qErr)
			}
			close(w.Events)
			close(w.Errors)
			return
		case ov == nil:
			w.mu.Lock()
			reqs := w.reqs
			w.reqs = nil
			w.mu.Unlock()
			for _, r := range reqs {
				switch r.op {
				case reqAdd:
					r.reply <- w.add(rs, r.path)
				case reqRemove:
					d := rs.watches[r.path]
					if d == nil {
						r.reply <- fsnotify.ErrNonExistentWatch
						continue
					}
					d.waiting = append(d.waiting, r.reply)
					w.end(rs, d)
				case reqClose:
					closeReply = r.reply
					for _, d := range rs.watches {
						w.end(rs, d)
					}
				}
			}
		default:
			if d := rs.open[ov]; d != nil {
				d.pending = false
				w.completed(rs, d, n, qErr)
			}
		}
		if closeReply != nil && len(rs.open) == 0 {
			err := windows.CloseHandle(w.port)
			close(w.Events)
			close(w.Errors)
			if err != nil {
				err = os.NewSyscallError("CloseHandle", err)
			}
			closeReply <- err
			return
		}
	}
}

// add opens dir and issues its first read.
func (w *osWatcher) add(rs *readerState, dir string) error {
	if rs.watches[dir] != nil {
		return nil
	}
	p, err := windows.UTF16PtrFromString(dir)
	if err != nil {
		return err
	}
	h, err := windows.CreateFile(p, windows.FILE_LIST_DIRECTORY,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, nil,
		windows.OPEN_EXISTING, windows.FILE_FLAG_BACKUP_SEMANTICS|windows.FILE_FLAG_OVERLAPPED, 0)
	if err != nil {
		return os.NewSyscallError("CreateFile", err)
	}
	var info windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &info); err != nil {
		_ = w.closeHandle(h)
		return os.NewSyscallError("GetFileInformationByHandle", err)
	}
	if info.FileAttributes&windows.FILE_ATTRIBUTE_DIRECTORY == 0 {
		_ = w.closeHandle(h)
		return &os.PathError{Op: "watch", Path: dir, Err: windows.ERROR_DIRECTORY}
	}
	if _, err := windows.CreateIoCompletionPort(h, w.port, 0, 0); err != nil {
		_ = w.closeHandle(h)
		return os.NewSyscallError("CreateIoCompletionPort", err)
	}
	d := &dirWatchOS{h: h, path: dir, buf: make([]byte, notifyBuffer)}
	if err := w.arm(d); err != nil {
		_ = w.closeHandle(h)
		return err
	}
	rs.watches[dir] = d
	rs.open[&d.ov] = d
	return nil
}

// arm issues d's next read.
func (w *osWatcher) arm(d *dirWatchOS) error {
	d.ov = windows.Overlapped{}
	err := windows.ReadDirectoryChanges(d.h, &d.buf[0], uint32(len(d.buf)), false, notifyFilter, nil, &d.ov, 0)
	if err != nil {
		return os.NewSyscallError("ReadDirectoryChanges", err)
	}
	d.pending = true
	return nil
}

// end removes d: its handle is closed now if no read is in flight, else
// once the cancelled read has completed.
func (w *osWatcher) end(rs *readerState, d *dirWatchOS) {
	if rs.watches[d.path] == d {
		delete(rs.watches, d.path)
	}
	d.ending = true
	if !d.pending {
		w.closeWatch(rs, d)
		return
	}
	// ERROR_NOT_FOUND: the read has completed and its packet is queued,
	// which closes the handle as well.
	_ = windows.CancelIoEx(d.h, &d.ov)
}

// closeWatch closes d's handle, which has no read in flight, and answers
// the Removes that wait for it.
func (w *osWatcher) closeWatch(rs *readerState, d *dirWatchOS) {
	delete(rs.open, &d.ov)
	err := w.closeHandle(d.h)
	if err != nil {
		err = os.NewSyscallError("CloseHandle", err)
	}
	for _, c := range d.waiting {
		c <- err
	}
	d.waiting = nil
}

// completed handles the completion of d's read: its events, then the next
// read, unless d was removed or its directory is gone.
func (w *osWatcher) completed(rs *readerState, d *dirWatchOS, n uint32, qErr error) {
	if d.ending {
		w.closeWatch(rs, d)
		return
	}
	switch {
	case qErr == nil && n == 0:
		w.Errors <- fsnotify.ErrEventOverflow
	case qErr == nil:
		w.deliver(d, n)
	case errors.Is(qErr, windows.ERROR_OPERATION_ABORTED):
		// Cancelled by no Remove of ours (the thread that issued it is
		// locked to the reader, which is here): read again.
	default:
		// ERROR_ACCESS_DENIED and the like: the directory is gone.
		w.gone(rs, d)
		return
	}
	if err := w.arm(d); err != nil {
		w.gone(rs, d)
	}
}

// gone ends d's watch because its directory cannot be read any more
// (removed, or its volume gone), and says so with a Remove of the
// directory itself.
func (w *osWatcher) gone(rs *readerState, d *dirWatchOS) {
	w.end(rs, d)
	w.Events <- fsnotify.Event{Name: d.path, Op: fsnotify.Remove}
}

// deliver sends the events of the n bytes a read returned.
func (w *osWatcher) deliver(d *dirWatchOS, n uint32) {
	const head = uint32(unsafe.Offsetof(windows.FileNotifyInformation{}.FileName))
	for off := uint32(0); off+head <= n; {
		raw := (*windows.FileNotifyInformation)(unsafe.Pointer(&d.buf[off]))
		size := raw.FileNameLength / 2
		if off+head+raw.FileNameLength > n {
			break // torn: never written so by Windows
		}
		name := windows.UTF16ToString(unsafe.Slice(&raw.FileName, size))
		ev := fsnotify.Event{Name: filepath.Join(d.path, name)}
		switch raw.Action {
		case windows.FILE_ACTION_ADDED, windows.FILE_ACTION_RENAMED_NEW_NAME:
			ev.Op = fsnotify.Create
		case windows.FILE_ACTION_REMOVED:
			ev.Op = fsnotify.Remove
		case windows.FILE_ACTION_MODIFIED:
			ev.Op = fsnotify.Write
		case windows.FILE_ACTION_RENAMED_OLD_NAME:
			ev.Op = fsnotify.Rename
		}
		if ev.Op != 0 {
			w.Events <- ev
		}
		if raw.NextEntryOffset == 0 {
			break
		}
		off += raw.NextEntryOffset
	}
}
