package jobstore

import (
	"fmt"
	"path/filepath"
)

// File names inside a job directory.
const (
	SpecFile   = "job.json"
	StatusFile = "status.json"
	LockFile   = "job.lock"
	CancelFile = "cancel.json"
)

// maxJobIDLen is the longest job ID ValidateJobID accepts (its doc says 128).
const maxJobIDLen = 128

// JobDir is the path of one job's directory, <root>/<job-id>. The directory
// name is the job ID.
type JobDir string

// SpecPath returns the path of job.json, the submission record.
func (d JobDir) SpecPath() string { return filepath.Join(string(d), SpecFile) }

// StatusPath returns the path of status.json, the runner's latest status.
func (d JobDir) StatusPath() string { return filepath.Join(string(d), StatusFile) }

// LockPath returns the path of job.lock, held by the runner.
func (d JobDir) LockPath() string { return filepath.Join(string(d), LockFile) }

// CancelPath returns the path of cancel.json, the cancel request.
func (d JobDir) CancelPath() string { return filepath.Join(string(d), CancelFile) }

// ID returns the job ID, the directory's base name.
func (d JobDir) ID() string { return filepath.Base(string(d)) }

// ValidateJobID checks that id can name a job directory on every platform:
// 1 to 128 characters of [A-Za-z0-9._-], not starting with '.' or '-' (so it
// is never hidden, never taken for a flag, and never "." or ".."). The error
// is an *Error of kind ErrInvalid with Subject "job_id".
func ValidateJobID(id string) error { return validateJobID("validate job ID", "", id) }

// validateJobID is ValidateJobID with the op and path of the caller's error.
func validateJobID(op, path, id string) error {
	bad := func(msg string) error {
		return errInvalid(op, path, "job_id", id, "1-128 characters of [A-Za-z0-9._-], not starting with '.' or '-'", msg,
			"choose an ID of letters, digits, '.', '_' and '-' that starts with a letter or digit")
	}
	switch {
	case id == "":
		return bad("is empty")
	case len(id) > maxJobIDLen:
		return bad(fmt.Sprintf("is %d characters long, more than %d", len(id), maxJobIDLen))
	case id[0] == '.' || id[0] == '-':
		return bad(fmt.Sprintf("%q starts with %q", id, id[0]))
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return bad(fmt.Sprintf("%q has the character %q at byte %d", id, c, i))
		}
	}
	return nil
}

// DirFor validates id and returns root/id.
func DirFor(root, id string) (JobDir, error) { return dirFor("validate job ID", root, id) }

// dirFor is DirFor with op named in the error.
func dirFor(op, root, id string) (JobDir, error) {
	if err := validateJobID(op, "", id); err != nil {
		return "", err
	}
	return JobDir(filepath.Join(root, id)), nil
}
