//go:build unix

package fsys

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/google/renameio/v2"
	"golang.org/x/sys/unix"
)

// The temp file of the write protocol on Unix: renameio creates it in the
// very directory the descriptor holds, through a path that resolves to the
// descriptor itself (Linux, heldPath) or in an os.Root checked to be that
// directory (elsewhere).

// CreateTemp has renameio create a temp file for name in d: its name ("." +
// name + random decimal digits), the O_CREAT|O_EXCL create (never an
// existing file, never through a link at that name: O_EXCL refuses one
// wherever it points), a new name on a collision, and perm less the umask.
// It returns the file, open for writing, and its name in d. The file is
// made in the directory d holds even if its path was renamed or replaced
// since Open: on Linux renameio creates it by d's heldPath, which names the
// descriptor, not the path; elsewhere in an os.Root checked to be that
// directory (see openRoot), and a swap before the root's open is refused.
// Everything after the create (write, fsync, close, publish, the directory
// fsync) is the caller's: renameio's CloseAtomicallyReplace would neither
// fsync the directory nor publish without replacing.
func (d *Dir) CreateTemp(name string, perm fs.FileMode) (File, string, error) {
	if held, ok := d.heldPath(); ok && d.root == nil {
		atTempSeam("create", d.path)
		return d.pendingFile(name, renameio.WithTempDir(held), renameio.WithPermissions(perm))
	}
	return d.createTempInRoot(name, perm)
}

// createTempInRoot is CreateTemp in d's kept root, or in one opened and
// checked for this call.
func (d *Dir) createTempInRoot(name string, perm fs.FileMode) (File, string, error) {
	root := d.root
	if root == nil {
		r, err := d.openRoot()
		if err != nil {
			return nil, "", err
		}
		defer r.Close() // the temp file stays open without it
		root = r
	}
	atTempSeam("create", d.path)
	return d.pendingFile(name, renameio.WithRoot(root), renameio.WithPermissions(perm))
}

// pendingFile is renameio's create of the temp file for name with opts,
// which place it in d. WithPermissions only: the umask applies at the
// create and renameio has no chmod to do, the one step after which
// NewPendingFile fails with the temp file left open and in place.
func (d *Dir) pendingFile(name string, opts ...renameio.Option) (File, string, error) {
	pf, err := renameio.NewPendingFile(name, opts...)
	if err != nil {
		return nil, "", &fs.PathError{Op: "create", Path: filepath.Join(d.path, "."+name+"*"), Err: pathErrno(err)}
	}
	tmp := filepath.Base(pf.Name())
	if digits, ok := strings.CutPrefix(tmp, "."+name); !ok || !allDigits(digits) {
		// Cleanup, sweeps and the readers' scans rely on this naming; a
		// renameio that changed it must not leave strays.
		_ = pf.Cleanup()
		return nil, "", &fs.PathError{Op: "create", Path: filepath.Join(d.path, tmp),
			Err: errors.New(`renameio named the temp file otherwise than "." + name + digits`)}
	}
	return pf.File, tmp, nil
}

// KeepRoot opens d's os.Root once, checked, for every later CreateTemp,
// which then creates in it (on Linux too): a directory that takes many
// writes pays the root's open and check once instead of per write where
// there is no heldPath. Call it before d is shared between goroutines.
func (d *Dir) KeepRoot() error {
	if d.root != nil {
		return nil
	}
	r, err := d.openRoot()
	if err != nil {
		return err
	}
	d.root = r
	return nil
}

// tempSeam, when set (by tests only), runs at two instants at which a swap
// of the directory must change nothing outside it: before openRoot opens the
// root (step "open root": the swap must be refused) and just before
// renameio's create (step "create": the held path or the checked root names
// the directory, so the file is made there whatever the path now names).
var tempSeam atomic.Pointer[func(step, dir string)]

func atTempSeam(step, dir string) {
	if h := tempSeam.Load(); h != nil {
		(*h)(step, dir)
	}
}

// ErrDirReplaced: the path no longer names the directory that was opened.
var ErrDirReplaced = errors.New("the directory was replaced while the record was being written; nothing was written")

// openRoot opens an os.Root of the directory d's descriptor holds. os.Root
// cannot be made from a descriptor, so it is opened by d's path and then
// checked to be the same directory (device and inode, both held open, so
// neither can be reused meanwhile). If the path was swapped in between (a
// link put in place of a confined directory, another directory, a FIFO),
// the create is refused: a confined directory that is now a link or not a
// directory is a *NotRegularError; anything else is ErrDirReplaced or the
// open's error. Only writers pay for it (an open, two stats and a close):
// readers never create a temp file.
func (d *Dir) openRoot() (*os.Root, error) {
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
			err = ErrDirReplaced
		}
	}
	if d.nofollow {
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

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return len(s) > 0
}
