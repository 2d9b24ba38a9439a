package jobstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/axqua/jobstore/internal/fsys"
)

// sentinel is the type of the package's sentinel errors. A sentinel may stand for a
// standard error as well (ErrNotJob is also fs.ErrNotExist), so that callers
// who only know package os can still match it. Sentinels are written as
// positional literals, so that a new one cannot leave out its code.
type sentinel struct {
	code Code // ErrorCode's name for it
	msg  string
	std  error
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
	ErrNotJob error = &sentinel{CodeNotJob, "not a job directory", fs.ErrNotExist}
	// ErrExists: job.json already exists; a job record is written once.
	// errors.Is(err, fs.ErrExist) is true as well.
	ErrExists error = &sentinel{CodeExists, "record already exists", fs.ErrExist}
	// ErrCorrupt: the file stayed unreadable as JSON through every retry.
	ErrCorrupt error = &sentinel{CodeCorrupt, "corrupt record", nil}
	// ErrTooLarge: on read, the file is larger than the read limit
	// (WithMaxSize); on write, the encoded record is larger than
	// DefaultMaxSize, and nothing was written.
	ErrTooLarge error = &sentinel{CodeTooLarge, "record too large", nil}
	// ErrInvalid: a value is not acceptable (a field on write, a field or
	// schema_version on read, a job ID, an argument). Error.Subject names
	// the field.
	ErrInvalid error = &sentinel{CodeInvalid, "invalid value", nil}
	// ErrWrongState: the job's state does not allow the operation, and
	// nothing was written: Start, RequestCancel or an update of a finished
	// job, WriteStatus over a final status, Remove of a job that is not
	// finished, Retry of a job that is not failed, lost or cancelled.
	// Error.Subject is "state"; Error.Found holds the state concerned (""
	// for a job with no status yet) and Error.Supported the states
	// accepted, when known.
	ErrWrongState error = &sentinel{CodeWrongState, "the job's state does not allow this", nil}
	// ErrNewerSchema: the record was written by a newer jobstore.
	// Error.Found and Error.Supported hold the two versions.
	ErrNewerSchema error = &sentinel{CodeNewerSchema, "record written by a newer jobstore", nil}
	// ErrNoMigration: no migration step exists from the record's version.
	ErrNoMigration error = &sentinel{CodeNoMigration, "no migration for this schema version", nil}
	// ErrLocked: another runner (or a reconciler) holds the job's job.lock.
	// Error.Msg names the holder as job.lock records it (see LockJob), or,
	// when job.lock holds no record, as status.json does.
	ErrLocked error = &sentinel{CodeLocked, "job is locked by another process", nil}
	// ErrCancelRequested: the job has a cancel request (cancel.json). It is
	// Start's error for such a job, and the cause of a Run's Context once
	// the request arrives; Error.Msg names the requester and the reason.
	ErrCancelRequested error = &sentinel{CodeCancelRequested, "cancel requested", nil}
	// ErrNotRegular: a job directory that is not a plain directory (a
	// symbolic link, which jobstore never follows), or a record or job.lock
	// that is not a regular file (a link, a FIFO, a socket, a device). It is
	// reported at once, never retried; Error.Found names the file type.
	ErrNotRegular error = &sentinel{CodeNotRegular, "not a regular file or directory", nil}
	// ErrNotOwner: a Run no longer owns its job. Its attempt was taken over
	// (a reconciler or a new Start on some host judged it gone, after its
	// lease went unrenewed), or its lease lapsed by its own clock before it
	// could renew. Nothing was written: the record of whoever replaced the
	// runner stands. It is sticky (every later call of the Run returns it)
	// and it is the cause of the Run's Context; the runner should stop its
	// work.
	ErrNotOwner error = &sentinel{CodeNotOwner, "the runner no longer owns the job", nil}
	// ErrNotDue: the job may not start yet: its spec's not_before, or the
	// retry_at of a pending retry, is later than now. Error.Found holds
	// that time; Start writes nothing.
	ErrNotDue error = &sentinel{CodeNotDue, "the job is not due yet", nil}
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
		msg = e.Sentinel.Error() // a Sentinel set by hand, not one of ours
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

// Code is ErrorCode's name for a kind of error, for programs that cannot
// match Go values (scripts, JSON output, other languages). The names are
// stable: a new version may add one, never rename one.
type Code string

// The codes ErrorCode returns. Each sentinel has its own (CodeNotJob for
// ErrNotJob, ...); CodeTimeout and CodeInterrupted name the end of a
// caller's context; CodeIO any other failure.
const (
	CodeNotJob          Code = "not_job"
	CodeExists          Code = "exists"
	CodeCorrupt         Code = "corrupt"
	CodeTooLarge        Code = "too_large"
	CodeInvalid         Code = "invalid"
	CodeWrongState      Code = "wrong_state"
	CodeNewerSchema     Code = "newer_schema"
	CodeNoMigration     Code = "no_migration"
	CodeLocked          Code = "locked"
	CodeCancelRequested Code = "cancel_requested"
	CodeNotRegular      Code = "not_regular"
	CodeNotOwner        Code = "not_owner"
	CodeNotDue          Code = "not_due"
	CodeTimeout         Code = "timeout"     // a wait ended by its context's deadline
	CodeInterrupted     Code = "interrupted" // a wait ended by its context's cancel
	CodeIO              Code = "io"          // any other failure
)

// Codes returns every code ErrorCode may return, in the order of the
// constants above (a new slice at each call).
func Codes() []Code {
	return []Code{CodeNotJob, CodeExists, CodeCorrupt, CodeTooLarge, CodeInvalid, CodeWrongState,
		CodeNewerSchema, CodeNoMigration, CodeLocked, CodeCancelRequested, CodeNotRegular, CodeNotOwner,
		CodeNotDue, CodeTimeout, CodeInterrupted, CodeIO}
}

// ErrorCode names the kind of err: the code of the first of the package's
// sentinels found in err (an *Error whose Sentinel is ErrNotJob, ...,
// found by errors.Unwrap, depth first: CodeNotJob, ...); otherwise
// CodeTimeout when err matches context.DeadlineExceeded and
// CodeInterrupted when it matches context.Canceled (a wait such as
// StartNext's or Wait's ended by the caller's context); CodeIO for any
// other error (an I/O failure, a cause from outside jobstore); "" for nil.
func ErrorCode(err error) Code {
	if err == nil {
		return ""
	}
	if s := sentinelOf(err); s != nil {
		return s.code
	}
	for _, c := range contextCodes {
		if errors.Is(err, c.err) {
			return c.code
		}
	}
	return CodeIO
}

// contextCodes are ErrorCode's names for the ends of a caller's context,
// which are not jobstore's sentinels: errors.Is(err, context.Canceled)
// already tells them apart.
var contextCodes = [...]struct {
	err  error
	code Code
}{
	{context.DeadlineExceeded, CodeTimeout},
	{context.Canceled, CodeInterrupted},
}

// sentinelOf finds the first of our sentinels in err's tree: a sentinel
// itself, or the Sentinel of an *Error.
func sentinelOf(err error) *sentinel {
	switch x := err.(type) {
	case *sentinel:
		return x
	case *Error:
		if s, ok := x.Sentinel.(*sentinel); ok {
			return s
		}
	}
	switch x := err.(type) {
	case interface{ Unwrap() error }:
		if next := x.Unwrap(); next != nil {
			return sentinelOf(next)
		}
	case interface{ Unwrap() []error }:
		for _, next := range x.Unwrap() {
			if s := sentinelOf(next); s != nil {
				return s
			}
		}
	}
	return nil
}

// The constructors: every *Error the package returns is built by one of
// these, so that one kind of failure reads the same and carries the same
// fields wherever it happens. An error is never changed once returned:
// annotated copies it.

// errNotJob: dir (a JobDir) has no job.json, or does not exist.
func errNotJob[D ~string](op string, dir D) *Error {
	return &Error{Op: op, Path: string(dir), Sentinel: ErrNotJob, Msg: "no job.json here",
		Remedy: "that directory is not a job: check the path, or submit the job first"}
}

// errNoJobDir: there is no directory at dir (a JobDir): a mistyped path,
// or a job removed. Like errNotJob, it is ErrNotJob.
func errNoJobDir[D ~string](op string, dir D) *Error {
	return &Error{Op: op, Path: string(dir), Sentinel: ErrNotJob, Msg: "no such directory",
		Remedy: "check the path: no directory is there (a removed job leaves none)"}
}

// errRemovedMeanwhile: the job directory dir was removed (renamed away by
// Remove) while op was at work on it.
func errRemovedMeanwhile[D ~string](op string, dir D) *Error {
	return &Error{Op: op, Path: string(dir), Sentinel: ErrNotJob, Msg: "the job was removed meanwhile",
		Remedy: "nothing to do: the job is gone"}
}

// errExists: a write-once record is already at path; cause is the OS error
// that said so.
func errExists(op, path string, cause error) *Error {
	return &Error{Op: op, Path: path, Sentinel: ErrExists, Err: cause,
		Msg:    "already exists; a job record is written once",
		Remedy: "read the existing record, or submit under a new job ID"}
}

// errCorrupt: bytes that are not one JSON value. size is their length
// (Found), msg says what the damage looks like, cause is the parser's error.
func errCorrupt(size int, cause error, msg, remedy string) *Error {
	return &Error{Sentinel: ErrCorrupt, Found: size, Msg: msg, Remedy: remedy, Err: cause}
}

// errTooLarge: a file of size bytes, over the reader's limit.
func errTooLarge(op, path string, size, limit int64) *Error {
	return &Error{Op: op, Path: path, Sentinel: ErrTooLarge, Found: size, Supported: limit,
		Msg: fmt.Sprintf("%d bytes, more than the limit of %d", size, limit),
		Remedy: "jobstore refuses to write a record this large, so an older writer or another tool made it; " +
			"read it with a larger WithMaxSize, or remove it"}
}

// tooLargeToWrite: an encoded record of size bytes that a writer refuses,
// because the readers' default limit would refuse it. Nothing was written.
func tooLargeToWrite(size, limit int) *Error {
	return &Error{Sentinel: ErrTooLarge, Found: int64(size), Supported: int64(limit),
		Msg:    fmt.Sprintf("the record is %d bytes encoded, more than the readers' limit of %d", size, limit),
		Remedy: "nothing was written; make the record smaller: keep bulky data in files and put their paths in params"}
}

// irregular: what is at path is not what a job directory or a record may
// be (a link, a FIFO, a socket, a device, a directory); nr says what it is.
func irregular(op, path string, nr *fsys.NotRegularError) *Error {
	return &Error{Op: op, Path: path, Sentinel: ErrNotRegular, Msg: nr.Error(), Found: nr.Mode.Type().String(),
		Remedy: "remove or rename it: a job directory is a plain directory and its records are regular files; " +
			"jobstore never follows a link out of the root nor opens a FIFO, socket or device"}
}

// errUnsupported: this platform has no file primitives (js/wasm, wasip1,
// plan9); cause is errors.ErrUnsupported.
func errUnsupported(op, path string, cause error) *Error {
	return &Error{Op: op, Path: path, Err: cause, Msg: "jobstore has no file primitives on " + runtime.GOOS + "/" + runtime.GOARCH,
		Remedy: "run jobstore on a Unix system or on Windows"}
}

// writePermissionRemedy is the remedy of a write refused for want of
// permission (EACCES, EPERM): records, cancel requests, claims and
// job.lock are created in the job directory, so each user that writes
// them (a worker, a GUI that cancels) needs write permission on it.
const writePermissionRemedy = "give this user write permission on the job directory, where records, cancel requests and job.lock are created; " +
	"a root that several users write to needs its directories group-writable with the setgid bit (chmod 2775, one group for those users) " +
	"and umask 002 for each of them"

// stepError: a step of the write protocol (or of taking the lock) failed
// with err; msg says which. An empty remedy is the protocol's own: the
// previous record is intact.
func stepError(op, path string, err error, msg, remedy string) *Error {
	switch {
	case remedy == "" && errors.Is(err, fs.ErrPermission):
		remedy = "the previous record is intact; " + writePermissionRemedy
	case remedy == "":
		remedy = "the previous record is intact; check free space, permissions and the disk, then write again"
	}
	return errIO(op, path, err, msg, remedy)
}

// errInvalid: a value that breaks a rule, as v says: its subject (a field,
// "job_id", "schema_version"), the value found and what is accepted
// (either may be nil), what is wrong, and the remedy ("correct the
// <subject> field" when empty).
func errInvalid(op, path string, v invalid) *Error {
	if v.remedy == "" {
		v.remedy = "correct the " + v.subject + " field"
	}
	return &Error{Op: op, Path: path, Subject: v.subject, Sentinel: ErrInvalid,
		Found: v.found, Supported: v.supported, Msg: v.msg, Remedy: v.remedy}
}

// invalid is what errInvalid says of a value: the field (subject), the
// value found and what is supported, what is wrong with it (msg) and what
// to do (remedy: "correct the <subject> field" when empty).
type invalid struct {
	subject          string
	found, supported any
	msg, remedy      string
}

// errWrongState: the job's state refuses op, as v says: the state found,
// the states op accepts, what is wrong and the remedy. Subject is "state".
func errWrongState(op, path string, v invalid) *Error {
	return &Error{Op: op, Path: path, Subject: "state", Sentinel: ErrWrongState,
		Found: v.found, Supported: v.supported, Msg: v.msg, Remedy: v.remedy}
}

// errWrongJobID: a record at path whose job_id is not the name of its job
// directory dir (a JobDir).
func errWrongJobID[D ~string](op, path, jobID string, dir D) *Error {
	name := filepath.Base(string(dir))
	return errInvalid(op, path, invalid{subject: "job_id", found: jobID, supported: name, msg: fmt.Sprintf("%q differs from the directory name %q", jobID, name)})
}

// errMalformed: data that an encoder or decoder refused (ErrInvalid);
// cause is its error. subject names the field or the record, if known.
func errMalformed(op, path, subject string, cause error, msg, remedy string) *Error {
	return &Error{Op: op, Path: path, Subject: subject, Sentinel: ErrInvalid, Msg: msg, Remedy: remedy, Err: cause}
}

// errNewerSchema: a record of version found, where this jobstore
// understands up to supported.
func errNewerSchema(op string, found, supported int) *Error {
	return &Error{Op: op, Subject: "schema_version",
		Msg:   fmt.Sprintf("written by a newer jobstore (schema_version %d); this version understands up to %d", found, supported),
		Found: found, Supported: supported, Sentinel: ErrNewerSchema,
		Remedy: "upgrade jobstore (or the tool reading this record) to a version that understands it; the record is left as it is"}
}

// errNoMigration: a record of version from, older than current, with no
// step to version from+1 (cause nil) or whose step failed (cause).
func errNoMigration(op string, from, current int, cause error) *Error {
	e := &Error{Op: op, Subject: "schema_version", Found: from, Supported: current, Sentinel: ErrNoMigration,
		Msg:    fmt.Sprintf("no migration from schema_version %d to %d", from, from+1),
		Remedy: fmt.Sprintf("rewrite the record at schema_version %d, or use the jobstore release that wrote it", current)}
	if cause != nil {
		e.Msg = fmt.Sprintf("migration from schema_version %d to %d failed", from, from+1)
		e.Remedy = "the record does not fit the migration; correct it by hand or rewrite it"
		e.Err = cause
	}
	return e
}

// errLocked: job.lock at path is held; holder describes by whom.
func errLocked(op, path, holder string) *Error {
	return &Error{Op: op, Path: path, Sentinel: ErrLocked, Msg: holder,
		Remedy: "another process works on this job; wait for it to finish, or stop that process"}
}

// errNotOwner: the Run's attempt n of dir was fenced (cause: the failed
// operation's error) or, with cause nil, its lease lapsed (msg says how).
func errNotOwner(op, path string, n uint64, cause error, msg string) *Error {
	return &Error{Op: op, Path: path, Sentinel: ErrNotOwner, Subject: "attempt", Found: n, Msg: msg, Err: cause,
		Remedy: "stop working on the job and read its status to see who replaced this runner; " +
			"if this runner was alive, its lease went unrenewed (a pause, an overloaded host, a slow shared filesystem): use a longer lease (WithLease)"}
}

// errClaimTaken: attempt directory path is claimed or over (ErrLocked);
// msg says by whom or how, remedy what the claimant should do.
func errClaimTaken(op, path, msg, remedy string) *Error {
	return &Error{Op: op, Path: path, Sentinel: ErrLocked, Msg: msg, Remedy: remedy}
}

// errCancelRequested: the job has a cancel request; msg names it, cause is
// why cancel.json could not be read, if it could not.
func errCancelRequested(op, path string, cause error, msg, remedy string) *Error {
	return &Error{Op: op, Path: path, Sentinel: ErrCancelRequested, Msg: msg, Err: cause, Remedy: remedy}
}

// errBecause: op on path stopped because of cause, an error from elsewhere
// (an earlier failure, context.Canceled), kept whole: unlike errIO, its
// sentinel and every error it wraps still match with errors.Is. cause may
// be nil.
func errBecause(op, path string, cause error, msg, remedy string) *Error {
	return &Error{Op: op, Path: path, Err: cause, Msg: msg, Remedy: remedy}
}

// errIO: an operation on path failed with cause, an OS error. There is no
// sentinel: errors.Is reaches the cause (fs.ErrPermission, syscall.ENOSPC).
// A *fs.PathError is unwrapped, since the path is in the *Error already.
func errIO(op, path string, cause error, msg, remedy string) *Error {
	var pe *fs.PathError
	if errors.As(cause, &pe) {
		cause = pe.Err
	}
	return &Error{Op: op, Path: path, Err: cause, Msg: msg, Remedy: remedy}
}

// annotated returns err with edit applied to a copy of it, when err is an
// *Error; any other error is returned as it is. err itself is never
// changed: whoever returned it may hold it, compare it, or return it again.
func annotated(err error, edit func(*Error)) error {
	e, ok := err.(*Error)
	if !ok || e == nil {
		return err
	}
	c := *e
	edit(&c)
	return &c
}

// withPath gives a decode error the op and path it was found at, where it
// names none. An error that is not an *Error becomes ErrInvalid wrapping it.
func withPath(err error, op, path string) error {
	if _, ok := err.(*Error); !ok {
		return errMalformed(op, path, "", err, "cannot decode the record", "correct the record, or remove it and write it again")
	}
	return annotated(err, func(e *Error) {
		if e.Path == "" {
			e.Path = path
		}
		if e.Op == "" {
			e.Op = op
		}
	})
}
