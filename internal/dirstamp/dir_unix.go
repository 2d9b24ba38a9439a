//go:build unix

package dirstamp

import (
	"io/fs"
	"os"

	"golang.org/x/sys/unix"

	"github.com/axqua/jobstore/internal/fsys"
)

// Dir is a directory opened to stamp it and the directories in it. Its
// descriptor is used as it is for stats; an *os.File is made of it only
// for a listing (os.NewFile costs a system call, and most opens list
// nothing), and owns the descriptor from then on.
type Dir struct {
	path string
	fd   int
	f    *os.File // nil until the first listing
}

// Open opens the directory at path (which may go through symbolic links).
func Open(path string) (*Dir, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return &Dir{path: path, fd: fd}, nil
}

// Close closes the directory.
func (d *Dir) Close() error {
	if d.f != nil {
		return d.f.Close()
	}
	if err := unix.Close(d.fd); err != nil {
		return &os.PathError{Op: "close", Path: d.path, Err: err}
	}
	return nil
}

// Stamp is the directory's own stamp.
func (d *Dir) Stamp() (Stamp, error) {
	var st unix.Stat_t
	if err := ignoringEINTR(func() error { return unix.Fstat(d.fd, &st) }); err != nil {
		return Stamp{}, &os.PathError{Op: "fstat", Path: d.path, Err: err}
	}
	return stampOf(&st), nil
}

// Names returns the names of the directory's entries that are directories
// or of unknown type (never ".", "..").
func (d *Dir) Names() ([]string, error) {
	des, err := d.readDir()
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(des))
	for _, de := range des {
		if t := de.Type(); t.IsDir() || t&os.ModeType == os.ModeIrregular {
			names = append(names, de.Name())
		}
	}
	return names, nil
}

// Entries returns the directory's entries (never ".", "..") with their
// types, in no particular order: one listing, no stat of each (an entry
// whose type the listing does not give is lstat'ed for it).
func (d *Dir) Entries() ([]Entry, error) {
	des, err := d.readDir()
	if err != nil {
		return nil, err
	}
	return entriesOf(des), nil
}

// readDir lists the directory from its start, however often it was listed.
func (d *Dir) readDir() ([]os.DirEntry, error) {
	if d.f == nil {
		d.f = os.NewFile(uintptr(d.fd), d.path)
	}
	if _, err := d.f.Seek(0, 0); err != nil {
		return nil, err
	}
	return d.f.ReadDir(-1)
}

// LstatEntry stamps the entry name of d, whatever its type, and returns
// its type: a symbolic link is stamped and reported, never followed.
func (d *Dir) LstatEntry(name string) (Stamp, fs.FileMode, error) {
	var st unix.Stat_t
	if err := d.fstatat(name, &st); err != nil {
		return Stamp{}, 0, &os.PathError{Op: "lstat", Path: name, Err: err}
	}
	return stampOf(&st), fsys.FileMode(uint32(st.Mode)).Type(), nil
}

// Lstat stamps the entry name of d, without following a symbolic link.
func (d *Dir) Lstat(name string) (Stamp, error) {
	var st unix.Stat_t
	if err := d.fstatat(name, &st); err != nil {
		return Stamp{}, &os.PathError{Op: "lstat", Path: name, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return Stamp{}, &os.PathError{Op: "lstat", Path: name, Err: ErrNotDir}
	}
	return stampOf(&st), nil
}

// FileStamp stamps the regular file at rel, a path relative to d (its last
// element is not followed if it is a symbolic link).
func (d *Dir) FileStamp(rel string) (Stamp, error) {
	var st unix.Stat_t
	if err := d.fstatat(rel, &st); err != nil {
		return Stamp{}, &os.PathError{Op: "lstat", Path: rel, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return Stamp{}, &os.PathError{Op: "lstat", Path: rel, Err: ErrNotRegular}
	}
	return stampOf(&st), nil
}

// fstatat lstats name relative to d.
func (d *Dir) fstatat(name string, st *unix.Stat_t) error {
	return ignoringEINTR(func() error { return unix.Fstatat(d.fd, name, st, unix.AT_SYMLINK_NOFOLLOW) })
}

// ignoringEINTR calls call until it fails with anything but EINTR.
func ignoringEINTR(call func() error) error {
	for {
		if err := call(); err != unix.EINTR {
			return err
		}
	}
}

func stampOf(st *unix.Stat_t) Stamp {
	return Stamp{Dev: uint64(st.Dev), Ino: uint64(st.Ino), Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano(), Size: int64(st.Size)}
}
