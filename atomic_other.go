//go:build !unix && !windows

package jobstore

import (
	"errors"
	"io/fs"
	"os"
)

// On js/wasm, wasip1 and plan9 the package builds, but has none of the
// primitives its guarantees rest on (a directory descriptor, O_NOFOLLOW, a
// non-blocking open, a file lock): openDir fails with errors.ErrUnsupported,
// which every writer, reader and LockJob reports as an *Error, and so
// nothing else here is ever called.

type dirHandle struct{}

func openDir(string, bool) (dirHandle, error) { return dirHandle{}, errors.ErrUnsupported }

func (dirHandle) close() error { return nil }
func (dirHandle) createTemp(string, string, fs.FileMode) (tempFile, string, error) {
	return nil, "", errors.ErrUnsupported
}
func (dirHandle) replace(string, string, bool) error               { return errors.ErrUnsupported }
func (dirHandle) publishNew(string, string, bool) (bool, error)    { return false, errors.ErrUnsupported }
func (dirHandle) remove(string) error                              { return errors.ErrUnsupported }
func (dirHandle) sync() error                                      { return errors.ErrUnsupported }
func (dirHandle) lstat(string) (fs.FileInfo, error)                { return nil, errors.ErrUnsupported }
func (dirHandle) names() ([]string, error)                         { return nil, errors.ErrUnsupported }
func (dirHandle) openRecord(string) (recordFile, error)            { return nil, errors.ErrUnsupported }
func (dirHandle) openLock(string) (*os.File, error)                { return nil, errors.ErrUnsupported }
func replaceFailure(dirHandle, string, error) (msg, remedy string) { return "", "" }

func isTransientReadError(error) bool { return false }
