package jobstore

import (
	"errors"
	"io/fs"
	"strings"
)

// sentinel is the type of the package's sentinel errors. A sentinel may stand for a
// standard error as well (ErrNotJob is also fs.ErrNotExist), so that callers
// who only know package os can still match it.
type sentinel struct {
	msg string
	std error
}

func (k *sentinel) Error() string { return "jobstore: " + k.msg }

// Is reports whether k also stands for target (ErrNotJob for fs.ErrNotExist,
// ErrExists for fs.ErrExist).
func (k *sentinel) Is(target error) bool { return k.std != nil && k.std == target }

// Sentinel errors. Every error the package returns is an *Error whose Sentinel is
// one of these (or nil for plain I/O failures, which then unwrap to the OS
// error). Match them with errors.Is.
var (
	// ErrNotJob: the directory has no job.json (or does not exist).
	// errors.Is(err, fs.ErrNotExist) is true as well.
	ErrNotJob error = &sentinel{"not a job directory", fs.ErrNotExist}
	// ErrExists: job.json already exists; a job record is written once.
	// errors.Is(err, fs.ErrExist) is true as well.
	ErrExists error = &sentinel{"record already exists", fs.ErrExist}
	// ErrCorrupt: the file stayed unreadable as JSON through every retry.
	ErrCorrupt error = &sentinel{"corrupt record", nil}
	// ErrTooLarge: the file is larger than the read limit (WithMaxSize).
	ErrTooLarge error = &sentinel{"record too large", nil}
	// ErrInvalid: a value is not acceptable (a field on write, a field or
	// schema_version on read, a job ID). Error.Subject names the field.
	ErrInvalid error = &sentinel{"invalid value", nil}
	// ErrNewerSchema: the record was written by a newer jobstore.
	// Error.Found and Error.Supported hold the two versions.
	ErrNewerSchema error = &sentinel{"record written by a newer jobstore", nil}
	// ErrNoMigration: no migration step exists from the record's version.
	ErrNoMigration error = &sentinel{"no migration for this schema version", nil}
	// ErrLocked: another runner (or a reconciler) holds the job's job.lock.
	// Error.Msg names the holder as recorded in status.json.
	ErrLocked error = &sentinel{"job is locked by another process", nil}
	// ErrNotRegular: a job directory that is not a plain directory (a
	// symbolic link, which jobstore never follows), or a record or job.lock
	// that is not a regular file (a link, a FIFO, a socket, a device). It is
	// reported at once, never retried; Error.Found names the file type.
	ErrNotRegular error = &sentinel{"not a regular file or directory", nil}
)

// Error is the error type of every failure the package reports. Like
// *fs.PathError it names the operation and the file and unwraps to the cause,
// so errors.Is(err, syscall.ENOSPC) keeps working; it adds what a person
// needs to act on it.
type Error struct {
	Op      string // what was being done: "write status", "read spec", "fsync", ...
	Path    string // the file or directory concerned, if any
	Subject string // what the error is about: a field ("progress"), "schema_version", a step
	Msg     string // what went wrong, in words
	Remedy  string // what to do about it
	// Found is the offending value as found (a schema version, a field value);
	// Supported is what the package accepts (the newest schema version, a range).
	Found, Supported any
	// Sentinel is one of the package's sentinels (ErrCorrupt, ...) or nil.
	Sentinel error
	// Err is the underlying cause, returned by Unwrap; it may be nil.
	Err error
}

// Error reads as one sentence, then the remedy:
//
//	jobstore: read status /r/j1/status.json: schema_version: written by a newer jobstore (schema_version 3); this version understands up to 1. Remedy: upgrade jobstore ...
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("jobstore: ")
	head := e.Op // the pure decoders have no op and no path
	if e.Path != "" {
		head = strings.TrimPrefix(head+" "+e.Path, " ")
	}
	if head != "" {
		b.WriteString(head)
		b.WriteString(": ")
	}
	if e.Subject != "" {
		b.WriteString(e.Subject)
		b.WriteString(": ")
	}
	msg := e.Msg
	if k, ok := e.Sentinel.(*sentinel); ok && msg == "" {
		msg = k.msg
	} else if msg == "" && e.Sentinel != nil {
		msg = e.Sentinel.Error() // a Kind set by hand, not one of ours
	}
	b.WriteString(msg)
	if e.Err != nil {
		if msg != "" {
			b.WriteString(": ")
		}
		b.WriteString(e.Err.Error())
	}
	if e.Remedy != "" {
		if !strings.HasSuffix(b.String(), ".") { // Windows' messages end in one
			b.WriteString(".")
		}
		b.WriteString(" Remedy: ")
		b.WriteString(e.Remedy)
	}
	return b.String()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrCorrupt) (and the other sentinels, and the
// standard errors they stand for) true for an *Error of that kind.
func (e *Error) Is(target error) bool {
	return e.Sentinel != nil && (e.Sentinel == target || errors.Is(e.Sentinel, target))
}
