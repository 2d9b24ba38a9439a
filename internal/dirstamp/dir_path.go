//go:build !unix

package dirstamp

import (
	"io/fs"
	"os"
	"path/filepath"
)

// Dir is a directory opened to stamp it and the directories in it. Off
// Unix it is a path: a stamp is a path's attributes (on Windows,
// GetFileAttributesEx's).
type Dir struct {
	path string
}

// Open checks that path is a directory.
func Open(path string) (*Dir, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, &os.PathError{Op: "open", Path: path, Err: ErrNotDir}
	}
	return &Dir{path: path}, nil
}

// Close does nothing: nothing is held.
func (d *Dir) Close() error { return nil }

// Stamp is the directory's own stamp.
func (d *Dir) Stamp() (Stamp, error) { return lstat(d.path, os.Stat) }

// Names returns the names of the directory's entries that are directories
// (a link or junction is left out).
func (d *Dir) Names() ([]string, error) {
	des, err := os.ReadDir(d.path)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(des))
	for _, de := range des {
		if de.IsDir() {
			names = append(names, de.Name())
		}
	}
	return names, nil
}

// Entries returns the directory's entries with their types, in no
// particular order.
func (d *Dir) Entries() ([]Entry, error) {
	des, err := os.ReadDir(d.path)
	if err != nil {
		return nil, err
	}
	return entriesOf(des), nil
}

// LstatEntry stamps the entry name of d, whatever its type, and returns
// its type: a link is stamped and reported, never followed.
func (d *Dir) LstatEntry(name string) (Stamp, fs.FileMode, error) {
	fi, err := os.Lstat(filepath.Join(d.path, name))
	if err != nil {
		return Stamp{}, 0, err
	}
	return fileStamp(fi), fi.Mode().Type(), nil
}

// FileStamp stamps the regular file at rel, a path relative to d (its last
// element is not followed if it is a link).
func (d *Dir) FileStamp(rel string) (Stamp, error) {
	path := filepath.Join(d.path, rel)
	fi, err := os.Lstat(path)
	if err != nil {
		return Stamp{}, err
	}
	if !fi.Mode().IsRegular() {
		return Stamp{}, &os.PathError{Op: "lstat", Path: path, Err: ErrNotRegular}
	}
	return fileStamp(fi), nil
}

// Lstat stamps the entry name of d, without following a link.
func (d *Dir) Lstat(name string) (Stamp, error) { return lstat(filepath.Join(d.path, name), os.Lstat) }

func lstat(path string, stat func(string) (os.FileInfo, error)) (Stamp, error) {
	fi, err := stat(path)
	if err != nil {
		return Stamp{}, err
	}
	if !fi.IsDir() || fi.Mode()&os.ModeSymlink != 0 {
		return Stamp{}, &os.PathError{Op: "lstat", Path: path, Err: ErrNotDir}
	}
	return fileStamp(fi), nil
}
