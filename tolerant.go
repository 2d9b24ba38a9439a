package jobstore

import (
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/axqua/jobstore/internal/fsys"
)

// ReadJSONTolerant reads the JSON file at path into v, looking again when it
// sees a torn moment.
//
// An absent file is found == false with a nil error: for status.json that is
// the normal "nothing has run yet". Invalid or truncated JSON, and on
// Windows a sharing violation or access denied while a writer replaces the
// file, are retried: the file is reopened each time (a descriptor held
// across a replace may see the old inode on NFS), DefaultReadAttempts times
// DefaultReadDelay apart unless WithRetries says otherwise. What is still
// invalid after the last attempt is an *Error of kind ErrCorrupt naming the
// path, the cause and a remedy; its message says whether the file looks
// like an interrupted write (empty, NUL-filled, truncated), holds more than
// one JSON value, or is not JSON at all.
//
// A stale file handle (ESTALE from the open, the stat or a read, on Unix;
// or a file that opened and was then not found by its stat or a read) has
// a budget of its own, which these attempts do not spend: it is what a
// network filesystem client (NFS, GlusterFS) answers while it still holds
// the handle of a file that another host replaced, until its cache lets go
// of it (on GlusterFS, about its cache-timeout of 1 s; measured in
// docs/benchmarks.md#glusterfs-how-long-a-client-lags).
// The file is reopened 5 ms after the first, then at twice the pause each
// time up to 100 ms, until 2 s have passed since the first. A handle still
// stale then is an *Error (kind "io") naming the path; it unwraps to
// syscall.ESTALE, or for a file that vanished after its open to an error
// that does not match fs.ErrNotExist (only a failed open means that the
// file is absent). Not retried: permission denied, a file larger than
// WithMaxSize (ErrTooLarge), JSON that is valid but does not fit v
// (ErrInvalid), and anything at path that is not a regular file
// (ErrNotRegular): a directory, a symbolic link
// (never followed), a FIFO, socket or device (opened without blocking, then
// refused at once, never read). path's directory may be reached through
// links.
// Trailing data after the value ("{}{}") is corrupt. v is only written by a decode of valid JSON.
func ReadJSONTolerant(path string, v any, opts ...ReadOption) (found bool, err error) {
	found, err = readPathTolerant("read", path, newReadOptions(opts), func(data []byte) error {
		return jsonDecode(data, v)
	})
	if err != nil {
		err = withPath(err, "read", path)
	}
	return found, err
}

// readPathTolerant is readTolerant for a record named by its path (whose
// directory may be reached through links, the caller's choice): a missing
// directory reads as a missing record.
func readPathTolerant(op, path string, o readOptions, decode func([]byte) error) (bool, error) {
	at := pathRecord(path)
	d, err := openDirAt(op, at)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer d.Close()
	return readTolerant(op, d, at, o, decode)
}

// readTolerant is the retry policy every reader goes through. decode gets
// the file's bytes; an error of kind ErrCorrupt from it means a torn or
// damaged file and is retried, any other error is returned as it is. A
// stale file handle is retried on its own budget (staleRetry).
// The file is opened in d, which the caller opened on at.dir.
func readTolerant(op string, d *fsys.Dir, at recordAt, o readOptions, decode func([]byte) error) (bool, error) {
	var lastErr error
	var stale staleRetry
	for attempt := 0; attempt < o.attempts; {
		data, err := readOnce(op, d, at, o.maxSize)
		switch {
		case err == nil:
			err = decode(data)
			if err == nil || !errors.Is(err, ErrCorrupt) {
				return true, err
			}
		case errors.Is(err, fs.ErrNotExist):
			return false, nil
		case fsys.IsStaleHandle(err) || errors.As(err, new(errVanished)):
			if stale.wait() {
				continue
			}
			return true, errIO(op, at.full(), osCause(err), fmt.Sprintf("the file handle is still stale after %v of reopening", staleRetryFor),
				"another host keeps replacing the file and this client's cache of it lags; read again later, "+
					"or shorten the client's cache time (GlusterFS: performance.md-cache-timeout; NFS: actimeo)")
		case !fsys.IsTransientRead(err):
			return true, err
		}
		lastErr = err
		if attempt++; attempt < o.attempts {
			time.Sleep(o.delay)
		}
	}
	var e *Error
	if errors.As(lastErr, &e) && e.Sentinel == ErrCorrupt {
		return true, annotated(e, func(c *Error) { c.Msg += fmt.Sprintf(", the same through %d reads", o.attempts) })
	}
	return true, errIO(op, at.full(), osCause(lastErr), fmt.Sprintf("still unreadable after %d attempts", o.attempts),
		"the file is busy or on a filesystem that lost track of it; read again later")
}

// osCause is the OS error inside a read's *Error: wrapping that *Error
// would repeat the path and add a second remedy.
func osCause(err error) error {
	var e *Error
	if errors.As(err, &e) && e.Err != nil {
		return e.Err
	}
	return err
}

// How long a reader reopens a file whose handle is stale (see
// ReadJSONTolerant): longer than a GlusterFS client was measured to keep a
// stale handle (docs/benchmarks.md#glusterfs-how-long-a-client-lags).
//
// Listing the directory before reopening would end it sooner (the client
// refreshes the name from the listing), but the listing also caches what a
// writer's temp file looks like before its rename: with it, pollers read
// status.json as empty (4 reads in a row) or absent, which without it they
// never did. A slow answer is better than a wrong one.
const (
	staleRetryFor   = 2 * time.Second
	staleRetryFirst = 5 * time.Millisecond
	staleRetryMax   = 100 * time.Millisecond
)

// staleRetry paces the reopening of a stale file handle; its zero value has
// seen none.
type staleRetry struct {
	first time.Time     // the first ESTALE
	pause time.Duration // before the next reopening
}

// wait sleeps before the next reopening and reports true, or reports false
// once staleRetryFor has passed since the first ESTALE.
func (s *staleRetry) wait() bool {
	now := time.Now()
	if s.first.IsZero() {
		s.first, s.pause = now, staleRetryFirst
	}
	left := staleRetryFor - now.Sub(s.first)
	if left <= 0 {
		return false
	}
	time.Sleep(min(s.pause, left))
	s.pause = min(2*s.pause, staleRetryMax)
	return true
}

// readOnce opens, reads and closes at.name in d, refusing anything but a
// regular file, and files over maxSize. status.json is opened as a record
// that a replace may hide for an instant (see fsys.Dir.OpenRecordHidden).
func readOnce(op string, d *fsys.Dir, at recordAt, maxSize int64) ([]byte, error) {
	var f fsys.ReadFile
	var err error
	if at.job && at.name == StatusFile {
		f, err = d.OpenRecordHidden(at.name, SpecFile)
	} else {
		f, err = d.OpenRecord(at.name)
	}
	if err != nil {
		return nil, readError(op, at.full(), err)
	}
	defer f.Close()
	data, err := fsys.ReadAll(f, maxSize, func(size int64) error { return errTooLarge(op, at.full(), size, maxSize) })
	if err != nil && !isError(err) {
		// The file opened: not found now means replaced, not absent.
		return nil, readError(op, at.full(), goneAfterOpen(err))
	}
	return data, err
}

// isError reports an *Error in err's chain: one already named and
// explained.
func isError(err error) bool {
	var e *Error
	return errors.As(err, &e)
}

// errVanished is the cause of a read whose file opened, then was not found
// by its stat or a read: GlusterFS's open-behind reaches the server only at
// the first of those, by which time another host may have replaced the
// file. It is a stale handle, not an absent file (which only the open can
// report), and does not match fs.ErrNotExist.
type errVanished struct{ err error }

func (e errVanished) Error() string {
	return e.err.Error() + " (the file was replaced or removed after it was opened)"
}

// goneAfterOpen is err from the stat or a read of an opened file, made an
// errVanished when it says the file does not exist.
func goneAfterOpen(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	if errors.Is(err, fs.ErrNotExist) {
		return errVanished{err}
	}
	return err
}

func readError(op, path string, err error) error {
	var nr *fsys.NotRegularError
	if errors.As(err, &nr) {
		return irregular(op, path, nr)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	remedy := "check that the path names a record file in a directory, and the disk, then read again"
	if errors.Is(err, fs.ErrPermission) {
		remedy = "give the reading user read permission on the file and its directory"
	}
	return errIO(op, path, err, "cannot read the file", remedy)
}
