//go:build unix

package dirstamp

import (
	"io/fs"
	"os"

	"golang.org/x/sys/unix"

	"github.com/axqua/jobstore/internal/fsys"
)

// Dir is a directory opened to stamp it and the directories in it.
type Dir struct {
	f *os.File
}

// Open opens the directory at path (which may go through symbolic links).
func Open(path string) (*Dir, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return &Dir{f: os.NewFile(uintptr(fd), path)}, nil
}

// Close closes the directory.
func (d *Dir) Close() error { return d.f.Close() }

// Stamp is the directory's own stamp.
func (d *Dir) Stamp() (Stamp, error) {
	var st unix.Stat_t
	if err := fstat(d.f, &st); err != nil {
		return Stamp{}, &os.PathError{Op: "fstat", Path: d.f.Name(), Err: err}
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
	if _, err := d.f.Seek(0, 0); err != nil {
		return nil, err
	}
	return d.f.ReadDir(-1)
}

// LstatEntry stamps the entry name of d, whatever its type, and returns
// its type: a symbolic link is stamped and reported, never followed.
func (d *Dir) LstatEntry(name string) (Stamp, fs.FileMode, error) {
	var st unix.Stat_t
	if err := fstatat(d.f, name, &st); err != nil {
		return Stamp{}, 0, &os.PathError{Op: "lstat", Path: name, Err: err}
	}
	return stampOf(&st), fsys.FileMode(uint32(st.Mode)).Type(), nil
}

// Lstat stamps the entry name of d, without following a symbolic link.
func (d *Dir) Lstat(name string) (Stamp, error) {
	var st unix.Stat_t
	if err := fstatat(d.f, name, &st); err != nil {
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
	if err := fstatat(d.f, rel, &st); err != nil {
		return Stamp{}, &os.PathError{Op: "lstat", Path: rel, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return Stamp{}, &os.PathError{Op: "lstat", Path: rel, Err: ErrNotRegular}
	}
	return stampOf(&st), nil
}

func fstat(f *os.File, st *unix.Stat_t) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = unix.Fstat(int(fd), st) }); err != nil {
		return err
	}
	return serr
}

func fstatat(f *os.File, name string, st *unix.Stat_t) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		for {
			serr = unix.Fstatat(int(fd), name, st, unix.AT_SYMLINK_NOFOLLOW)
			if serr != unix.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	return serr
}

func stampOf(st *unix.Stat_t) Stamp {
	return Stamp{Dev: uint64(st.Dev), Ino: uint64(st.Ino), Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano(), Size: int64(st.Size)}
}
