//go:build unix

package jobstore

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/google/renameio/v2"
)

// writeTemp creates the temp file in path's own directory and writes data
// to it; on failure nothing is left. The file comes from renameio with
// WithTempDir: its default (os.TempDir) would probe the temp directory with
// extra files on every call and rename across directories.
func writeTemp(path string, data []byte, perm fs.FileMode) (*renameio.PendingFile, error) {
	pf, err := renameio.NewPendingFile(path, renameio.WithTempDir(filepath.Dir(path)), renameio.WithPermissions(perm))
	if err != nil {
		return nil, stepError("create temp file", path, err, "cannot create the temp file in the record's directory", "")
	}
	if _, err := pf.Write(data); err != nil {
		_ = pf.Cleanup() // closes and removes the temp file; its error adds nothing
		return nil, stepError("write", pf.Name(), err, "cannot write the temp file", "")
	}
	return pf, nil
}

// replaceFile is the write protocol: temp file in path's directory, write,
// fsync, close, rename, fsync the directory.
func replaceFile(path string, data []byte, o writeOptions) error {
	pf, err := writeTemp(path, data, o.perm)
	if err != nil {
		return err
	}
	published := false
	defer func() {
		if !published {
			_ = pf.Cleanup()
		}
	}()
	if o.noSync {
		if err := pf.File.Close(); err != nil {
			return stepError("close", pf.Name(), err, "cannot close the temp file", "")
		}
		if err := os.Rename(pf.Name(), path); err != nil {
			return stepError("rename", path, unwrapLink(err), "cannot replace the record with the temp file", "")
		}
		published = true
		return nil
	}
	// fsync, close, rename; which one failed is told by the error's Op.
	if err := pf.CloseAtomicallyReplace(); err != nil {
		var le *os.LinkError
		var pe *fs.PathError
		switch {
		case errors.As(err, &le):
			return stepError("rename", path, le.Err, "cannot replace the record with the temp file", "")
		case errors.As(err, &pe) && pe.Op == "sync":
			return stepError("fsync", pf.Name(), err, "the disk did not confirm the temp file (not retried: a second fsync can claim success after losing the data)", "")
		default:
			return stepError("close", pf.Name(), err, "cannot close the temp file", "")
		}
	}
	published = true
	return syncDir(filepath.Dir(path), path)
}

// createExclusive publishes data at path only if path does not exist, even
// when several processes race: the temp file is written and fsynced, then
// given the name with a no-replace rename (Linux) or link(2), both of which
// fail with EEXIST if the name is taken. Never check-then-rename.
func createExclusive(path string, data []byte, o writeOptions) error {
	pf, err := writeTemp(path, data, o.perm)
	if err != nil {
		return err
	}
	published := false
	defer func() {
		if !published {
			_ = pf.Cleanup()
		}
	}()
	if !o.noSync {
		if err := pf.Sync(); err != nil {
			return stepError("fsync", pf.Name(), err, "the disk did not confirm the temp file (not retried: a second fsync can claim success after losing the data)", "")
		}
	}
	if err := pf.File.Close(); err != nil {
		return stepError("close", pf.Name(), err, "cannot close the temp file", "")
	}
	moved, err := renameNoReplace(pf.Name(), path)
	if err == nil && !moved {
		err = os.Link(pf.Name(), path) // no no-replace rename here
	}
	if err = unwrapLink(err); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return &Error{Op: "publish", Path: path, Msg: "already exists; a job record is written once", Err: err,
				Sentinel: ErrExists, Remedy: "read the existing record, or submit under a new job ID"}
		}
		return stepError("publish", path, err, "cannot give the temp file the record's name", "")
	}
	published = true
	if !moved {
		if err := os.Remove(pf.Name()); err != nil {
			return stepError("remove temp file", pf.Name(), err, "the record is in place, but its temp name could not be removed", "remove the file by hand; it is a second name of the record")
		}
	}
	if o.noSync {
		return nil
	}
	return syncDir(filepath.Dir(path), path)
}

func unwrapLink(err error) error {
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// syncDir makes dir's entries (a rename, a new name) durable. record names
// the file whose new entry this protects, for the error.
func syncDir(dir, record string) error {
	d, err := os.Open(dir) // read-only: O_WRONLY on a directory is EISDIR
	if err == nil {
		err = d.Sync()
		if cerr := d.Close(); err == nil {
			err = cerr
		}
	}
	if err == nil || errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOTSUP) || errors.Is(err, syscall.EOPNOTSUPP) {
		return nil // some filesystems cannot fsync a directory; nothing more to do there
	}
	return stepError("fsync directory", dir, err,
		filepath.Base(record)+" is in place and visible, but the directory was not confirmed on disk, so the change may not survive a power cut",
		"check the disk and filesystem, then write the record again")
}

// mkdirDurable creates dir (and missing parents) and fsyncs each parent, so
// the new directory entries survive a power cut. An existing dir is not an
// error; its parent is fsynced all the same, since an earlier creator may
// have crashed before doing so.
func mkdirDurable(dir string) error {
	err := os.Mkdir(dir, 0o755)
	if errors.Is(err, fs.ErrNotExist) {
		if perr := mkdirDurable(filepath.Dir(dir)); perr != nil {
			return perr
		}
		err = os.Mkdir(dir, 0o755)
	}
	if err != nil && !errors.Is(err, fs.ErrExist) {
		return stepError("create directory", dir, err, "cannot create the job directory", "check that the root exists and is writable")
	}
	if err != nil {
		if fi, serr := os.Stat(dir); serr != nil || !fi.IsDir() {
			return stepError("create directory", dir, syscall.ENOTDIR, "exists and is not a directory", "remove or rename that file, or choose another job ID")
		}
	}
	return syncDir(filepath.Dir(dir), dir)
}
