// Package fsys holds jobstore's directory primitives: a Dir is an open
// directory, and every file operation happens relative to it, by one name
// at a time, never following a symbolic link at that name.
//
// On Unix a Dir is a descriptor (O_DIRECTORY, and O_NOFOLLOW when opened
// confined) and every call is an *at system call on it, so a directory that
// is renamed, or replaced by a link, after Open cannot send an operation
// elsewhere. On Windows a Dir is a path checked not to be a link or a
// junction when it is opened, and files are opened with
// FILE_FLAG_OPEN_REPARSE_POINT. On platforms without the primitives
// (js/wasm, wasip1, plan9), Open fails with errors.ErrUnsupported.
//
// Errors are the operating system's (*fs.PathError and friends, matching
// fs.ErrNotExist and the errno with errors.Is), and *NotRegularError for a
// name that is there but of the wrong type; the caller turns them into its
// own error type.
package fsys

import (
	"io"
	"io/fs"
)

// File is what the write protocol needs of a new temp file.
type File interface {
	io.Writer
	Sync() error
	Close() error
}

// ReadFile is an open record (Dir.OpenRecord).
type ReadFile interface {
	io.ReadCloser
	Stat() (fs.FileInfo, error)
}

// NotRegularError reports a name that is there but is not what was asked
// for: a regular file, or a directory (Open and OpenDir with nofollow).
type NotRegularError struct{ Mode fs.FileMode }

func (e *NotRegularError) Error() string { return "is " + DescribeType(e.Mode) }

// DescribeType names a file type for an error.
func DescribeType(m fs.FileMode) string {
	switch t := m.Type(); {
	case t&fs.ModeSymlink != 0:
		return "a symbolic link, which jobstore never follows"
	case t&fs.ModeNamedPipe != 0:
		return "a FIFO (named pipe), not a regular file"
	case t&fs.ModeSocket != 0:
		return "a socket, not a regular file"
	case t&fs.ModeDevice != 0:
		return "a device, not a regular file"
	case t&fs.ModeIrregular != 0:
		return "a special file (a junction or other reparse point), which jobstore never follows"
	case t&fs.ModeDir != 0:
		return "a directory, not a record file"
	case t == 0:
		return "a regular file, not a directory"
	}
	return "not a regular file"
}

// ReadAll reads f to its end, refusing anything but a regular file and more
// than max bytes: the bound is checked against the size fstat reports before
// anything is read, and again while reading (a file that grows).
// tooLarge is called with the size seen to build the error. A read that
// returns exactly the size fstat reported, with room left for more, ends
// it: a regular file reads short only at its end, so the read that would
// return nothing is not made.
func ReadAll(f ReadFile, max int64, tooLarge func(size int64) error) ([]byte, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &NotRegularError{fi.Mode()}
	}
	if fi.Size() > max {
		return nil, tooLarge(fi.Size())
	}
	buf := make([]byte, 0, fi.Size()+1) // +1: see EOF without growing
	for {
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
		if int64(len(buf)) > max {
			return nil, tooLarge(int64(len(buf)))
		}
		if n > 0 && int64(len(buf)) == fi.Size() && len(buf) < cap(buf) {
			return buf, nil
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)] // the file grew while it was read
		}
	}
}
