package jobstore

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"path/filepath"
)

// WriteOption changes how a record is written.
type WriteOption func(*writeOptions)

type writeOptions struct {
	noSync bool
	perm   fs.FileMode
}

func newWriteOptions(opts []WriteOption) writeOptions {
	o := writeOptions{perm: 0o644}
	for _, f := range opts {
		f(&o)
	}
	return o
}

// NoSync skips both fsyncs (of the file and of its directory). The replace
// stays atomic: a reader sees the old record or the new one, never a mix,
// and a crash of the writing process changes nothing of that. A power cut
// or kernel crash may: afterwards the file may hold an earlier record, or,
// on filesystems that can commit the rename before the data (XFS; ext4
// mounted noauto_da_alloc), be empty or NUL-filled, which readers report as
// ErrCorrupt. Use it for high-rate progress updates whose loss costs
// nothing; never for a terminal state.
func NoSync() WriteOption { return func(o *writeOptions) { o.noSync = true } }

// WithPerm sets the new file's permission bits (default 0644; the umask
// applies). Pollers often run as another user: keep the file readable. For
// job.json the write bits are dropped, since it is read-only. On Windows
// only the owner's write bit means anything (without it the file is
// read-only, and Windows never replaces a read-only file), so a record that
// is rewritten (status.json) keeps it there.
func WithPerm(perm fs.FileMode) WriteOption {
	return func(o *writeOptions) { o.perm = perm & fs.ModePerm }
}

// WriteJSONAtomic writes v as JSON to path, replacing any previous file
// atomically and durably.
//
// v is marshalled once, before anything is touched: 2-space indent, a
// trailing newline, no HTML escaping; an encoding longer than DefaultMaxSize
// is ErrTooLarge (the readers would refuse it), and nothing is touched. Then a temp file is created in path's
// own directory (named "." + base + random digits, see IsTempName), written,
// fsynced and closed, renamed over path, and path's directory is fsynced.
//
// What others may see: a concurrent reader opens either the previous file or
// the new one, complete; never a missing, empty or partial file. After a
// crash at any instant, path holds the previous record or the new one, and
// if WriteJSONAtomic returned nil, the new one (unless NoSync was given).
//
// On failure nothing at path changed, the temp file is removed, and the error
// is an *Error whose Op names the failed step ("create temp file", "write",
// "fsync", "close", "rename", "fsync directory") and which unwraps to the OS
// error (errors.Is(err, syscall.ENOSPC) works). A failed fsync is never
// retried: after one, Linux may report the next as a success with the data
// lost. The one exception to "nothing changed": if only the directory fsync
// fails (EIO), the new file is already in place; the error says so. A
// directory fsync that the filesystem does not support (EINVAL, ENOTSUP) is
// not an error.
//
// On Windows, the replace is MoveFileEx(REPLACE_EXISTING|WRITE_THROUGH),
// retried for about 2 s while another process holds path open without
// FILE_SHARE_DELETE (every Go os.Open, most readers); directories are not
// fsynced, as Windows cannot.
func WriteJSONAtomic(path string, v any, opts ...WriteOption) error {
	data, err := marshalRecord(v)
	if errors.Is(err, ErrTooLarge) {
		return withPath(err, "marshal", path)
	}
	if err != nil {
		return &Error{Op: "marshal", Path: path, Msg: "cannot encode the value as JSON", Err: err,
			Sentinel: ErrInvalid, Remedy: "pass a value that encoding/json can marshal (no NaN, channels or functions)"}
	}
	return replaceFile(path, data, newWriteOptions(opts))
}

// marshalRecord is the file format's JSON layout. A record longer than
// DefaultMaxSize is ErrTooLarge: the readers would refuse it.
func marshalRecord(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil { // Encode ends the value with '\n'
		return nil, err
	}
	if buf.Len() > DefaultMaxSize {
		return nil, tooLargeToWrite(buf.Len())
	}
	return buf.Bytes(), nil
}

// IsTempName reports whether a file name is one of this package's temp
// files: "." + a target's base name + decimal digits (renameio's naming,
// used on every platform), e.g. ".status.json8674665223082153551". A
// directory scan must skip these; SweepTemps-style cleaners may remove them
// once they are old, never while a writer may still hold them.
func IsTempName(name string) bool {
	name = filepath.Base(name)
	for _, target := range tempTargets {
		p := "." + target
		if len(name) > len(p) && name[:len(p)] == p && allDigits(name[len(p):]) {
			return true
		}
	}
	return false
}

// tempTargets are the records whose temp files IsTempName recognises.
var tempTargets = [...]string{SpecFile, StatusFile, CancelFile, "index.json"}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return len(s) > 0
}

// stepError reports a failed step of the write protocol.
func stepError(op, path string, err error, msg, remedy string) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err // the path is ours already
	}
	if remedy == "" {
		remedy = "the previous record is intact; check free space, permissions and the disk, then write again"
	}
	return &Error{Op: op, Path: path, Msg: msg, Err: err, Remedy: remedy}
}
