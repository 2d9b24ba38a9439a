//go:build !unix && !windows

package fsys

import (
	"errors"
	"io/fs"
	"os"
	"time"
)

// On js/wasm, wasip1 and plan9 jobstore builds, but has none of the
// primitives its guarantees rest on (a directory descriptor, O_NOFOLLOW, a
// non-blocking open, a file lock): Open fails with errors.ErrUnsupported,
// which every caller reports, and so no other method is ever called.

// Dir is never opened here.
type Dir struct{}

// ID identifies nothing here.
type ID struct{}

// Open always fails with errors.ErrUnsupported.
func Open(string, bool) (*Dir, error) { return nil, errors.ErrUnsupported }

// OpenLookup always fails with errors.ErrUnsupported.
func OpenLookup(string) (*Dir, error) { return nil, errors.ErrUnsupported }

func (*Dir) OpenDir(string) (*Dir, error) { return nil, errors.ErrUnsupported }
func (*Dir) Path() string                 { return "" }
func (*Dir) Join(name string) string      { return name }
func (*Dir) Close() error                 { return nil }
func (*Dir) KeepRoot() error              { return errors.ErrUnsupported }
func (*Dir) CreateTemp(string, fs.FileMode) (File, string, error) {
	return nil, "", errors.ErrUnsupported
}
func (*Dir) NewTemp(string, fs.FileMode) (File, string, error) { return nil, "", errors.ErrUnsupported }
func (*Dir) Replace(string, string, bool, time.Duration) error { return errors.ErrUnsupported }
func (*Dir) ReplaceFrom(*Dir, string, string) error            { return errors.ErrUnsupported }
func (*Dir) PublishNew(string, string, bool) (bool, error)     { return false, errors.ErrUnsupported }
func (*Dir) RenameDirNoReplace(string, string) error           { return errors.ErrUnsupported }
func (*Dir) MoveDirNoReplace(string, *Dir, string) error       { return errors.ErrUnsupported }
func (*Dir) Unlink(string) error                               { return errors.ErrUnsupported }
func (*Dir) RemoveDir(string) error                            { return errors.ErrUnsupported }
func (*Dir) Mkdir(string, fs.FileMode) error                   { return errors.ErrUnsupported }
func (*Dir) Sync() error                                       { return errors.ErrUnsupported }
func (*Dir) Lstat(string) (fs.FileInfo, error)                 { return nil, errors.ErrUnsupported }
func (*Dir) ID() (ID, error)                                   { return ID{}, errors.ErrUnsupported }
func (*Dir) EntryID(string) (ID, error)                        { return ID{}, errors.ErrUnsupported }
func (*Dir) Names() ([]string, error)                          { return nil, errors.ErrUnsupported }
func (*Dir) OpenRecord(string) (ReadFile, error)               { return nil, errors.ErrUnsupported }
func (*Dir) OpenRecordHidden(string, string) (ReadFile, error) { return nil, errors.ErrUnsupported }
func (*Dir) OpenLock(string) (*os.File, error)                 { return nil, errors.ErrUnsupported }
func (*Dir) OpenWriter(string, fs.FileMode) (*os.File, error)  { return nil, errors.ErrUnsupported }
func (*Dir) CreateExcl(string, fs.FileMode) (File, error)      { return nil, errors.ErrUnsupported }
func (*Dir) ReplaceFailure(string, error) (msg, remedy string) { return "", "" }

// OpenReadWrite always fails with errors.ErrUnsupported.
func (*Dir) OpenReadWrite(string, fs.FileMode) (*os.File, error) { return nil, errors.ErrUnsupported }

// FileID: no files here.
func FileID(File) (ID, error) { return ID{}, errors.ErrUnsupported }

// IsTransientRead: nothing is read here.
func IsTransientRead(error) bool { return false }

// IsStaleHandle: nothing is read here.
func IsStaleHandle(error) bool { return false }

// IsDirNotEmpty: nothing is renamed here.
func IsDirNotEmpty(error) bool { return false }

// IsNotDir: no path runs through a file here that the primitives would see.
func IsNotDir(error) bool { return false }
