//go:build unix

package jobstore

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
)

// heldDir is a Run's attempt directory (.run-N) held open from the claim to
// Close, as an os.Root checked once, at the claim, to be the directory the
// claim created (tempRoot: reached from the job directory's descriptor with
// O_NOFOLLOW, device and inode compared). Each of the Run's writes has
// renameio create its temp file there without looking the directory up
// again; the rename still names it by its path from the job directory
// (recordAt.sub), so a fenced attempt's write fails at the rename, and its
// temp file, made in the directory now called .fenced-N, is removed through
// the root.
type heldDir struct {
	root *os.Root
	path string // the directory's path when it was opened, for errors
}

// holdDir opens the subdirectory sub of the job directory dir for a Run's
// writes. Where the platform holds nothing (Windows, where each write looks
// sub up by name), it is nil and no error.
func holdDir(dir JobDir, sub string) (*heldDir, error) {
	d, err := openDir(string(dir), true)
	if err != nil {
		return nil, err
	}
	defer d.close()
	s, err := d.openSub(sub)
	if err != nil {
		return nil, err
	}
	defer s.close()
	root, err := s.tempRoot()
	if err != nil {
		return nil, err
	}
	return &heldDir{root: root, path: s.path}, nil
}

// createTemp is dirOps.createTemp in the held directory, whose name in the
// job directory is sub: the name returned is sub/.name123.
func (h *heldDir) createTemp(sub, name string, perm fs.FileMode) (tempFile, string, error) {
	f, tmp, err := createTempIn(h.root, h.path, name, perm)
	return f, path.Join(sub, tmp), err
}

// remove removes the temp file tmp (sub/.name123) through the root, which
// reaches it even after sub was renamed.
func (h *heldDir) remove(tmp string) error {
	if err := h.root.Remove(path.Base(tmp)); err != nil {
		return &fs.PathError{Op: "remove", Path: filepath.Join(h.path, path.Base(tmp)), Err: pathErrno(err)}
	}
	return nil
}

// writeOnce creates name in the held directory, exclusively, and writes
// data to it in place, without fsync (owner.json: a reader that catches it
// incomplete judges the owner by its lease, as it does a claim without it).
func (h *heldDir) writeOnce(name string, data []byte) error {
	f, err := h.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return &fs.PathError{Op: "create", Path: filepath.Join(h.path, name), Err: pathErrno(err)}
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// close releases the directory; nil-safe.
func (h *heldDir) close() error {
	if h == nil {
		return nil
	}
	return h.root.Close()
}
