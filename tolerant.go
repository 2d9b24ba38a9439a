package jobstore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"time"

	"github.com/axqua/jobstore/internal/fsys"
)

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
	for _, f := range opts {
		f(&o)
	}
	return o
}

// WithRetries sets how many times a torn or transiently unreadable file is
// read (attempts, at least 1) and the pause between two reads.
func WithRetries(attempts int, delay time.Duration) ReadOption {
	return func(o *readOptions) { o.attempts, o.delay = max(attempts, 1), max(delay, 0) }
}

// WithMaxSize sets the largest file the reader accepts (default 16 MiB);
// a larger one is ErrTooLarge, without retry.
func WithMaxSize(n int64) ReadOption { return func(o *readOptions) { o.maxSize = n } }

// ReadJSONTolerant reads the JSON file at path into v, looking again when it
// sees a torn moment.
//
// An absent file is found == false with a nil error: for status.json that is
// the normal "nothing has run yet". Invalid or truncated JSON, and errors
// that pass (ESTALE on NFS; on Windows a sharing violation or access denied
// while a writer replaces the file), are retried: the file is reopened each
// time (a descriptor held across a replace may see the old inode on NFS),
// DefaultReadAttempts times DefaultReadDelay apart unless WithRetries says
// otherwise. What is still invalid after the last attempt is an *Error of
// kind ErrCorrupt naming the path, the cause and a remedy; its message says
// whether the file looks like an interrupted write (empty, NUL-filled,
// truncated), holds more than one JSON value, or is not JSON at all. Not
// retried: permission denied, a file larger than WithMaxSize (ErrTooLarge),
// JSON that is valid but does not fit v (ErrInvalid), and anything at path
// that is not a regular file (ErrNotRegular): a directory, a symbolic link
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

// jsonDecode is json.Unmarshal with the package's errors: ErrCorrupt for
// bytes that are not one JSON value, ErrInvalid for a value that does not
// fit v.
func jsonDecode(data []byte, v any) error {
	err := json.Unmarshal(data, v)
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return corrupt(data, se)
	}
	if err != nil {
		subject := ""
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			subject = te.Field
		}
		return errMalformed("", "", subject, "does not fit the value it is read into",
			"correct the record, or read it into a matching type", err)
	}
	return nil
}

// readTolerant is the retry policy every reader goes through. decode gets
// the file's bytes; an error of kind ErrCorrupt from it means a torn or
// damaged file and is retried, any other error is returned as it is.
// The file is opened in d, which the caller opened on at.dir.
func readTolerant(op string, d *fsys.Dir, at recordAt, o readOptions, decode func([]byte) error) (bool, error) {
	path := at.path()
	var lastErr error
	for attempt := 0; attempt < o.attempts; attempt++ {
		if attempt > 0 {
			time.Sleep(o.delay)
		}
		data, err := readOnce(op, d, at, o.maxSize)
		switch {
		case err == nil:
			err = decode(data)
			if err == nil || !errors.Is(err, ErrCorrupt) {
				return true, err
			}
		case errors.Is(err, fs.ErrNotExist):
			return false, nil
		case !fsys.IsTransientRead(err):
			return true, err
		}
		lastErr = err
	}
	var e *Error
	if errors.As(lastErr, &e) && e.Sentinel == ErrCorrupt {
		return true, annotated(e, func(c *Error) { c.Msg += fmt.Sprintf(", the same through %d reads", o.attempts) })
	}
	if errors.As(lastErr, &e) && e.Err != nil {
		lastErr = e.Err // the OS error: its *Error would repeat the path and add a second remedy
	}
	return true, errIO(op, path, lastErr, fmt.Sprintf("still unreadable after %d attempts", o.attempts),
		"the file is busy or on a filesystem that lost track of it; read again later")
}

const corruptRemedy = "jobstore's durable writes are never torn, so the file was damaged by a power cut after a NoSync write " +
	"(Run.Progress), by a writer that did not use the atomic protocol, or by the disk; restore it from a backup or remove it " +
	"(a removed status.json reads as \"nothing has run yet\"); RebuildIndex (jobstore list --rebuild) lists the other unreadable jobs"

// corrupt is the ErrCorrupt error for bytes that are not one JSON value; its
// message names what the damage looks like.
func corrupt(data []byte, se *json.SyntaxError) error {
	return errCorrupt(len(data), damage(data, se), corruptRemedy, se)
}

// damage names what a bad file looks like.
func damage(data []byte, se *json.SyntaxError) string {
	trimmed := bytes.TrimRight(data, "\x00")
	end, complete, cut := firstValue(trimmed)
	switch {
	case len(data) == 0:
		return "the file is empty: looks like an interrupted write"
	case len(trimmed) == 0:
		return fmt.Sprintf("the file holds only NUL bytes (%d): looks like an interrupted write whose data never reached the disk", len(data))
	case len(trimmed) < len(data) && (complete || cut):
		return fmt.Sprintf("the file ends in %d NUL bytes: looks like an interrupted write whose data never reached the disk", len(data)-len(trimmed))
	case cut:
		return fmt.Sprintf("the JSON ends early at byte %d: looks like an interrupted write (truncated file)", len(data))
	case complete:
		return fmt.Sprintf("not one JSON value: more data follows the value that ends at byte %d", end)
	default:
		return fmt.Sprintf("not JSON at all (byte %d of %d)", se.Offset, len(data))
	}
}

// firstValue decodes the first JSON value of data: complete (ending at byte
// end), or cut short (data is the beginning of a value, or only blanks).
func firstValue(data []byte) (end int64, complete, cut bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	err := dec.Decode(new(json.RawMessage))
	return dec.InputOffset(), err == nil, errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)
}

// readOnce opens, reads and closes at.name in d, refusing anything but a
// regular file, and files over maxSize. status.json is opened as a record
// that a replace may hide for an instant (see fsys.Dir.OpenRecordHidden).
func readOnce(op string, d *fsys.Dir, at recordAt, maxSize int64) ([]byte, error) {
	path := at.path()
	open := d.OpenRecord
	if at.job && at.name == StatusFile {
		open = func(name string) (fsys.ReadFile, error) { return d.OpenRecordHidden(name, SpecFile) }
	}
	f, err := open(at.name)
	if err != nil {
		return nil, readError(op, path, err)
	}
	defer f.Close()
	data, err := fsys.ReadAll(f, maxSize, func(size int64) error { return errTooLarge(op, path, size, maxSize) })
	var e *Error
	if err != nil && !errors.As(err, &e) {
		return nil, readError(op, path, err)
	}
	return data, err
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
