//go:build !unix

package jobview

import (
	"os"
	"path/filepath"
)

// openLogFileForRead opens dir/name for reading if neither dir nor name is a
// link and name is a regular file (looked at just before the open, and
// the opened file checked again).
func openLogFileForRead(dir, name string) (*os.File, error) {
	dir = filepath.Clean(dir) // "dir/" or "dir/." would follow a link at dir
	if fi, err := os.Lstat(dir); err == nil && !fi.IsDir() {
		return nil, &notRegularError{dir}
	}
	path := filepath.Join(dir, name)
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &notRegularError{path}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, &notRegularError{path}
	}
	return f, nil
}
