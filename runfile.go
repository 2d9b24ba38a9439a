package jobstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/axqua/jobstore/internal/fsys"
)

// OpenFile opens name, a file the runner keeps in the job directory beside
// the records (a command's output, such as "stdout.log"), for reading and
// writing, creating it with mode 0644 (less the umask) if it is missing.
// The file is not truncated, and its offset is 0.
//
// The file is opened relative to the job directory Start opened and the
// Run holds, never by its path: if the directory's entry in the root is
// replaced during the run (by a symbolic link to a directory elsewhere, or
// by another directory), the file is still opened in the directory the
// job was started in, never at the replacement. A name that is a symbolic
// link, a FIFO, a device or a directory is refused with ErrNotRegular,
// without blocking and without opening or creating anything it leads to
// (on Windows, a reparse point is not followed).
//
// name must be one file name: not empty, no path separator, not starting
// with '.' (the package's temp files), and none of the job's records
// (job.json, status.json, job.lock, cancel.json) in any case: else
// ErrInvalid, Subject "name", and nothing is opened. After Close, the
// error is ErrInvalid, Subject "run".
//
// The caller owns the file and closes it; it stays usable after the Run's
// Close. What others may do to the file meanwhile (the job's reader, a
// sweep) is not specified here: jobstore itself never changes or removes
// it, except Remove, which removes the whole job directory.
func (r *Run) OpenFile(name string) (*os.File, error) {
	const op = "open job file"
	if err := checkFileName(op, r.dir, name); err != nil {
		return nil, err
	}
	path := filepath.Join(string(r.dir), name)
	// wmu keeps Close, which closes the directory, out until the open is done.
	r.wmu.Lock()
	defer r.wmu.Unlock()
	r.mu.Lock()
	closed := r.lock == nil
	r.mu.Unlock()
	if closed {
		return nil, errInvalid(op, path, invalid{subject: "run", msg: "the run is closed and no longer holds the job directory",
			remedy: "open the job's files before Close"})
	}
	f, err := r.jd.OpenReadWrite(name, 0o644)
	var nr *fsys.NotRegularError
	switch {
	case err == nil:
		return f, nil
	case errors.As(err, &nr):
		return nil, irregular(op, path, nr)
	}
	return nil, errIO(op, path, unwrapPath(err), "cannot open or create the file in the job directory",
		"check that this user may create and write files in the job directory, and that the disk has space")
}

// checkFileName refuses a name OpenFile may not open in a job directory.
func checkFileName(op string, dir JobDir, name string) error {
	why := ""
	switch {
	case name == "":
		why = "is empty"
	case strings.ContainsFunc(name, isSeparator) || name == "..":
		why = fmt.Sprintf("%q is not one file name: it holds a path separator", name)
	case name[0] == '.':
		why = fmt.Sprintf("%q starts with '.', as the package's temp files do", name)
	}
	for _, rec := range [...]string{SpecFile, StatusFile, LockFile, CancelFile} {
		if why == "" && strings.EqualFold(name, rec) {
			why = fmt.Sprintf("%q is one of the job's records, which only jobstore writes", name)
		}
	}
	if why == "" {
		return nil
	}
	return errInvalid(op, string(dir), invalid{subject: "name", found: name, msg: "the file name " + why,
		remedy: "pass the name of a file of the runner's own, such as \"stdout.log\""})
}
