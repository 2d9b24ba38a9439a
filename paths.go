package jobstore

import (
	"fmt"
	"path/filepath"
	"strings"
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

// ValidateJobID checks that id can name a job directory under a root on
// Linux, macOS and Windows (roots are shared over SMB) without colliding
// with a name the package uses itself. It accepts exactly:
//
//   - 1 to 128 characters, each one of [A-Za-z0-9._-];
//   - not starting with '.' or '-' (so an ID is never hidden, never taken for
//     a flag or a temp file, and never "." or "..");
//   - not ending with '.' (Windows drops trailing dots, so "job." would be
//     the directory "job");
//   - not a Windows device name: CON, PRN, AUX, NUL, COM0-COM9 or LPT0-LPT9,
//     in any case, alone or followed by an extension ("aux.txt", "LPT9.log"),
//     which Windows cannot create as a directory;
//   - not a name the root reserves for itself: index.json (IndexFile), in
//     any case, since case-insensitive filesystems do not tell them apart.
//
// The error is an *Error of kind ErrInvalid with Subject "job_id", Found the
// ID, and a message naming the rule it breaks.
func ValidateJobID(id string) error { return validateJobID("validate job ID", "", id) }

// validateJobID is ValidateJobID with the op and path of the caller's error.
func validateJobID(op, path, id string) error {
	bad := func(msg string) error {
		return errInvalid(op, path, "job_id", id,
			"1-128 characters of [A-Za-z0-9._-], not starting with '.' or '-', not ending with '.', "+
				"not a Windows device name (CON, PRN, AUX, NUL, COM0-9, LPT0-9, with any extension), not "+IndexFile,
			msg, "choose an ID of letters, digits, '.', '_' and '-' that starts with a letter or digit")
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
	switch {
	case id[len(id)-1] == '.':
		return bad(fmt.Sprintf("%q ends with '.', which Windows drops from a file name", id))
	case isWindowsDeviceName(id):
		return bad(fmt.Sprintf("%q is a Windows device name, which Windows cannot create as a directory", id))
	}
	for _, name := range reservedRootNames {
		if strings.EqualFold(id, name) {
			return bad(fmt.Sprintf("%q is the name of the root's %s", id, name))
		}
	}
	return nil
}

// reservedRootNames are the files the package itself keeps in a root, next
// to the job directories (temp files start with '.', which IDs cannot).
var reservedRootNames = [...]string{IndexFile}

// isWindowsDeviceName reports whether Windows takes name for a device: its
// part before the first '.' is CON, PRN, AUX, NUL, COMn or LPTn (n a digit),
// in any case. Only ASCII is checked: IDs are ASCII, so the superscript
// digits Windows also accepts after COM and LPT cannot occur.
func isWindowsDeviceName(name string) bool {
	stem, _, _ := strings.Cut(name, ".")
	switch strings.ToUpper(stem) {
	case "CON", "PRN", "AUX", "NUL":
		return true
	}
	if len(stem) == 4 && '0' <= stem[3] && stem[3] <= '9' {
		switch strings.ToUpper(stem[:3]) {
		case "COM", "LPT":
			return true
		}
	}
	return false
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
