//go:build unix

package jobstore

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/google/renameio/v2"
	"golang.org/x/sys/unix"
)

// The temp file of the write protocol on Unix: renameio creates it, in an
// os.Root that is the very directory the protocol's descriptor holds.

// createTemp has renameio create the temp file: its name ("." + name +
// random decimal digits, see IsTempName), the O_CREAT|O_EXCL|O_NOFOLLOW
// create (never an existing file, never through a link), a new name on a
// collision, and perm less the umask. renameio creates it in an os.Root,
// never by path, and tempRoot makes that root the directory d holds.
// Everything after the create (write, fsync, close, publish through d, the
// directory fsync) stays with writeRecord and the other primitives, each
// step reporting its own failure: renameio's CloseAtomicallyReplace would
// neither fsync the directory nor publish without replacing (job.json).
//
// With sub set, the temp file is made in the subdirectory sub of d (a
// runner's .run-N), opened relative to d.fd with O_DIRECTORY|O_NOFOLLOW
// (see openSub), and its returned name is sub/name relative to d: the
// protocol renames it by that path from d.fd, so a sub renamed away
// meanwhile (a fenced attempt) makes the rename fail.
func (d dirHandle) createTemp(sub, name string, perm fs.FileMode) (tempFile, string, error) {
	if sub != "" {
		s, err := d.openSub(sub)
		if err != nil {
			return nil, "", err
		}
		defer s.close()
		f, tmp, err := s.createTemp("", name, perm)
		return f, path.Join(sub, tmp), err
	}
	root, err := d.tempRoot()
	if err != nil {
		return nil, "", err
	}
	defer root.Close() // the temp file stays open without it
	atTempSeam("create", d.path)
	return createTempIn(root, d.path, name, perm)
}

// createTempIn has renameio create the temp file for name in root, the
// directory at dirPath (named in errors), and returns it and its name there.
func createTempIn(root *os.Root, dirPath, name string, perm fs.FileMode) (tempFile, string, error) {
	// WithPermissions only: the umask applies at the create and renameio has
	// no chmod to do, the one step after which NewPendingFile fails with the
	// temp file left open and in place.
	pf, err := renameio.NewPendingFile(name, renameio.WithRoot(root), renameio.WithPermissions(perm))
	if err != nil {
		return nil, "", &fs.PathError{Op: "create", Path: filepath.Join(dirPath, "."+name+"*"), Err: pathErrno(err)}
	}
	tmp := filepath.Base(pf.Name())
	if digits, ok := strings.CutPrefix(tmp, "."+name); !ok || !allDigits(digits) {
		// The protocol's cleanup, SweepTemps and the readers' scans rely on
		// this naming; a renameio that changed it must not leave strays.
		_ = pf.Cleanup()
		return nil, "", &fs.PathError{Op: "create", Path: filepath.Join(dirPath, tmp),
			Err: errors.New(`renameio named the temp file otherwise than "." + name + digits`)}
	}
	return pf.File, tmp, nil
}

// tempSeam, when set (by tests only), runs at two instants at which a swap
// of the directory must change nothing outside it: before tempRoot opens the
// root (step "open root": the swap must be refused) and between the root's
// check and renameio's create (step "create": the root holds the directory,
// so the file is made there whatever the path now names).
var tempSeam atomic.Pointer[func(step, dir string)]

func atTempSeam(step, dir string) {
	if h := tempSeam.Load(); h != nil {
		(*h)(step, dir)
	}
}

// errDirReplaced: the path no longer names the directory the protocol
// opened.
var errDirReplaced = errors.New("the directory was replaced while the record was being written; nothing was written")

// tempRoot opens an os.Root of the directory d's descriptor holds. os.Root
// cannot be made from a descriptor, so it is opened by d's path and then
// checked to be the same directory (device and inode, both held open, so
// neither can be reused meanwhile). If the path was swapped in between (a
// link put in place of a job directory, another directory, a FIFO), the
// write is refused: a job directory that is now a link or not a directory is
// a *notRegularError; anything else is errDirReplaced or the open's error.
// Only writers pay for it (an open, two stats and a close): readers never
// create a temp file.
func (d dirHandle) tempRoot() (*os.Root, error) {
	atTempSeam("open root", d.path)
	// "/." makes the open resolve the path as a directory: a FIFO or device
	// swapped in fails with ENOTDIR instead of being opened (a FIFO would
	// block, as os.OpenRoot has no O_NONBLOCK).
	root, err := os.OpenRoot(d.path + string(filepath.Separator) + ".")
	if err == nil {
		same, serr := sameDir(d.fd, root)
		if serr == nil && same {
			return root, nil
		}
		root.Close()
		err = serr
		if serr == nil {
			err = errDirReplaced
		}
	}
	if d.job {
		if nr := notRegularAt(unix.AT_FDCWD, d.path, fs.ModeDir); nr != nil {
			return nil, nr
		}
	}
	return nil, &fs.PathError{Op: "open", Path: d.path, Err: pathErrno(err)}
}

// sameDir reports whether root is the directory open at fd.
func sameDir(fd int, root *os.Root) (bool, error) {
	var want unix.Stat_t
	if err := unix.Fstat(fd, &want); err != nil {
		return false, err
	}
	fi, err := root.Stat(".")
	if err != nil {
		return false, err
	}
	got, ok := fi.Sys().(*syscall.Stat_t)
	return ok && uint64(got.Dev) == uint64(want.Dev) && uint64(got.Ino) == uint64(want.Ino), nil
}

// pathErrno is err's cause without os's *PathError around it (its path is
// the root's or renameio's, not the one the caller reports).
func pathErrno(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// openSub opens the subdirectory name of d as a dirHandle of its own, never
// through a link (O_NOFOLLOW): a temp file made there with createTemp stays
// under d, and is published by a rename from the subdirectory's descriptor
// to d's.
func (d dirHandle) openSub(name string) (dirHandle, error) {
	path := filepath.Join(d.path, name)
	fd, err := openat(d.fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err == nil {
		return dirHandle{fd: fd, path: path, job: true}, nil
	}
	if nr := notRegularAt(d.fd, name, fs.ModeDir); nr != nil && err != unix.ENOENT {
		return dirHandle{fd: -1}, nr
	}
	return dirHandle{fd: -1}, &fs.PathError{Op: "open", Path: path, Err: err}
}
