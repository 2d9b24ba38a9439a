package jobstore

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/axqua/jobstore/internal/fsys"
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
//
// Every function that takes a JobDir reads it as filepath.Clean does: a
// trailing separator or "." element ("root/id/", "root/id//", "root/id/.")
// names the directory root/id, whose own entry must be a directory and is
// never followed if it is a symbolic link (ErrNotRegular), however the
// path is spelled.
type JobDir string

// SpecPath returns the path of job.json, the submission record.
func (d JobDir) SpecPath() string { return filepath.Join(string(d), SpecFile) }

// StatusPath returns the path of status.json, the runner's latest status.
func (d JobDir) StatusPath() string { return filepath.Join(string(d), StatusFile) }

// LockPath returns the path of job.lock, held by the runner.
func (d JobDir) LockPath() string { return filepath.Join(string(d), LockFile) }

// CancelPath returns the path of cancel.json, the cancel request.
func (d JobDir) CancelPath() string { return filepath.Join(string(d), CancelFile) }

// ID returns the job ID, the directory's base name: the last element of
// the path once trailing separators and "." elements are dropped ("j" for
// "root/j/."; ".." for "root/j/..", which is no job ID).
func (d JobDir) ID() string {
	s := string(d)
	vol := len(filepath.VolumeName(s))
	for {
		t := strings.TrimRightFunc(s[vol:], isSeparator)
		if n := len(t); n >= 2 && t[n-1] == '.' && isSeparator(rune(t[n-2])) {
			s = s[:vol+n-1]
			continue
		}
		if t == "" {
			return filepath.Base(string(d)) // "/" (or a volume's root)
		}
		return filepath.Base(s[:vol] + t)
	}
}

// isSeparator reports whether r separates path elements here ('/', and '\'
// on Windows).
func isSeparator(r rune) bool { return r < 0x80 && os.IsPathSeparator(uint8(r)) }

// clean is d as every function that takes a JobDir reads it
// (filepath.Clean): the path whose last element is the job directory's own
// entry, so that a trailing "/" or "/." cannot make the kernel follow a
// link there that an O_NOFOLLOW open of the entry refuses. Writers check
// the path as given first (checkJobDir): "root/j/.." is refused, not read
// as "root".
func (d JobDir) clean() JobDir {
	if d == "" {
		return d // not ".": no job directory at all
	}
	return JobDir(filepath.Clean(string(d)))
}

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
		return errInvalid(op, path, invalid{subject: "job_id", found: id, supported: "1-128 characters of [A-Za-z0-9._-], not starting with '.' or '-', not ending with '.', " +
			"not a Windows device name (CON, PRN, AUX, NUL, COM0-9, LPT0-9, with any extension), not " + IndexFile, msg: msg, remedy: "choose an ID of letters, digits, '.', '_' and '-' that starts with a letter or digit"})
	}
	switch {
	case id == "":
		return bad("is empty")
	case id[0] == '.' || id[0] == '-':
		return bad(fmt.Sprintf("%q starts with %q", id, id[0]))
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return bad(fmt.Sprintf("%q has %s at byte %d", id, charAt(id, i), i))
		}
	}
	switch { // id is ASCII now: its bytes are its characters
	case len(id) > maxJobIDLen:
		return bad(fmt.Sprintf("is %d characters long, more than %d", len(id), maxJobIDLen))
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

// charAt names the character that starts at byte i of s as a person reads
// it: the UTF-8 character ("the character 'é'"), or the byte itself when
// s holds no valid UTF-8 there ("the byte 0xe9 (not UTF-8)").
func charAt(s string, i int) string {
	r, size := utf8.DecodeRuneInString(s[i:])
	if r == utf8.RuneError && size <= 1 {
		return fmt.Sprintf("the byte %#02x (not UTF-8)", s[i])
	}
	return fmt.Sprintf("the character %q", r)
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
	is := func(names ...string) bool { // not strings.ToUpper: no copy per record read
		for _, n := range names {
			if strings.EqualFold(stem, n) {
				return true
			}
		}
		return false
	}
	if is("CON", "PRN", "AUX", "NUL") {
		return true
	}
	if len(stem) == 4 && '0' <= stem[3] && stem[3] <= '9' {
		stem = stem[:3]
		return is("COM", "LPT")
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

// IndexFile is the name of the index under the jobs root.
const IndexFile = "index.json"

// isJobName reports whether an entry of a jobs root named name may be a
// job directory: not a dot-name (LiveDir, temp and build directories) nor
// IndexFile. List, StartNext's and the Worker's views and WatchRoot pass
// over every other entry by this one rule.
func isJobName(name string) bool {
	return !strings.HasPrefix(name, ".") && name != IndexFile
}

// checkJobDir is the first step of every function that creates or changes a
// file in a job directory: dir's last element must be a job ID
// (ValidateJobID), or dir is not a job directory at all ("/", ".", "",
// "root/j/..", a dot-name such as a temp or build directory) and nothing is
// touched. The error is ErrInvalid, Subject "job_id", Path dir, Found its
// last element.
func checkJobDir(op string, dir JobDir) error {
	err := validateJobID(op, string(dir), dir.ID())
	if err == nil {
		return nil
	}
	return annotated(err, func(e *Error) {
		e.Msg = fmt.Sprintf("%q is not a job directory: its last element %s", string(dir), e.Msg)
		e.Remedy = "pass the job's own directory, <root>/<job-id>: Submit returns it and DirFor(root, id) builds it; nothing was written"
	})
}

// submitDir is the hidden directory of the jobs root in which createJob
// builds each job, in a directory named job ID + "-" + random digits, before
// it renames it into the root. Scans skip it (a dot-name); sweepRoot removes
// a build left by a crash.
//
// Builds live in a directory of their own rather than beside the jobs so
// that a listing of the root never names a directory about to be renamed:
// on GlusterFS, a directory renamed while another client lists its parent
// can stay unopenable (ESTALE, "stale file handle") from every client until
// the brick restarts (how often:
// docs/benchmarks.md#glusterfs-how-long-a-client-lags).
const submitDir = ".submit"

// openJobDir opens a job directory for reading: never through a link; a
// missing one is ErrNotJob ("no such directory").
func openJobDir(op string, dir JobDir) (*fsys.Dir, error) {
	d, err := openDirAt(op, jobRecord(dir, ""))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errNoJobDir(op, dir)
	}
	return d, err
}

// openJobDirToRead is openJobDir for a reader that opens and looks up
// files in the job directory and does nothing else there (fsys.OpenLookup).
func openJobDirToRead(op string, dir JobDir) (*fsys.Dir, error) {
	at := jobRecord(dir, "")
	at.lookup = true
	d, err := openDirAt(op, at)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errNoJobDir(op, dir)
	}
	return d, err
}

// jobDir is the path jd was opened by, as a JobDir: the name its errors
// give the job. A job directory's descriptor carries its path (as an
// *os.File carries its name), so the functions that work in an open job
// take the descriptor alone and cannot be handed a path of another job.
func jobDir(jd *fsys.Dir) JobDir { return JobDir(jd.Path()) }

// removePrefix starts the hidden name in the jobs root to which Remove
// renames a job directory before it deletes it: removePrefix + job ID +
// "-" + random digits. It is a dot-name, so List, JobDirs, ReconcileAll and
// every watcher of the root skip it.
const removePrefix = ".remove-"

// movedAway reports whether the job directory jd is no longer at its path:
// a Remove renamed it away (to delete it) after jd was opened, so that jd
// now reaches a directory outside the root's view. On
// Windows a directory open in this process cannot be renamed (Wine lets it
// be), and a Dir is known by its path: a directory gone from it is
// reported.
func movedAway(jd *fsys.Dir) (bool, error) {
	dir := jobDir(jd)
	id, err := jd.ID()
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil // Windows, where a Dir's identity is looked up by its path
	}
	if err != nil {
		return false, err
	}
	rd, err := fsys.Open(filepath.Dir(string(dir)), false)
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	defer rd.Close()
	now, err := rd.EntryID(dir.ID())
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil
	}
	return err == nil && now != id, err
}

// sweptPrefix starts the name a sweep gives a build directory it has taken
// (sweptPrefix + random digits, in submitDir) before it empties and removes
// it: once renamed, the build directory can no longer be published by its
// Submit, whose rename then fails, so a job never appears half removed.
const sweptPrefix = ".swept-"

// IsTempName reports whether a file name is one of this package's temp
// files: "." + a target's base name + decimal digits (renameio's naming,
// used on every platform), e.g. ".status.json8674665223082153551". A
// directory scan must skip these; SweepTemps-style cleaners may remove them
// once they are old, never while a writer may still hold them.
func IsTempName(name string) bool {
	name = filepath.Base(name)
	for _, target := range tempTargets {
		p := "." + target
		if len(name) > len(p) && name[:len(p)] == p && allDigits(name[len(p):]) {
			return true
		}
	}
	return false
}

// tempTargets are the records whose temp files IsTempName recognises.
var tempTargets = [...]string{SpecFile, StatusFile, CancelFile, IndexFile, legacyOwnerFile}

// legacyOwnerFile is the owner record that older jobstores wrote in each
// attempt directory; a crash could leave its temp file, which sweeps remove.
const legacyOwnerFile = "owner.json"

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return len(s) > 0
}

// recordAt names a record file: the directory that holds it and its name
// there.
type recordAt struct {
	dir, name string
	// job: dir is a job directory, which must be a directory itself and is
	// never reached through a symbolic link at its own name (a link there
	// could lead out of the root). The path above it (the root) is the
	// caller's choice and may hold links.
	job bool
	// lookup: the directory is opened to read and look up files in it
	// only (fsys.OpenLookup; job directories alone).
	lookup bool
}

func jobRecord(dir JobDir, name string) recordAt {
	return recordAt{dir: string(dir), name: name, job: true}
}

func pathRecord(path string) recordAt {
	return recordAt{dir: filepath.Dir(path), name: filepath.Base(path)}
}

func (r recordAt) full() string { return filepath.Join(r.dir, r.name) }

// openDirAt opens at's directory for the protocol or a reader; errors are
// *Error (ErrNotRegular for a job directory that is a link); a missing
// directory matches fs.ErrNotExist, for the caller to judge.
func openDirAt(op string, at recordAt) (*fsys.Dir, error) {
	var d *fsys.Dir
	var err error
	if at.lookup && at.job {
		d, err = fsys.OpenLookup(at.dir)
	} else {
		d, err = fsys.Open(at.dir, at.job)
	}
	if err == nil {
		return d, nil
	}
	var nr *fsys.NotRegularError
	switch {
	case errors.As(err, &nr):
		return nil, irregular(op, at.dir, nr)
	case errors.Is(err, errors.ErrUnsupported):
		return nil, errUnsupported(op, at.dir, err)
	}
	return nil, stepError(op, at.dir, err, "cannot open the directory", "check that the directory exists and that this user may search it")
}

func normTime(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond).Round(0) }

// jobIDTimeLayout is fixed width (for years 1000-9999), so that the lexical
// order of IDs is the order of their times.
const jobIDTimeLayout = "20060102T150405.000000Z"

// jobIDAlphabet is Crockford's base 32, lowercase: no i, l, o or u.
const jobIDAlphabet = "0123456789abcdefghjkmnpqrstvwxyz"

// jobIDRandomLen random characters carry 50 bits: two IDs of the same
// microsecond, on any processes or hosts, collide with probability 2^-50.
const jobIDRandomLen = 10

var lastJobID struct {
	sync.Mutex
	t time.Time
}

// NewJobID returns a new job ID such as "20261130T093540.123456Z-7k2m9xq4ab":
// the UTC time to the microsecond, then 10 random characters (crypto/rand).
// IDs sort by time as strings; within one process each ID sorts after the
// previous one (a repeated microsecond is bumped by one), across processes
// and hosts they are unique, with clocks deciding the order. An ID is valid
// per ValidateJobID.
func NewJobID() string {
	lastJobID.Lock()
	t := normTime(time.Now())
	if !t.After(lastJobID.t) {
		t = lastJobID.t.Add(time.Microsecond)
	}
	lastJobID.t = t
	lastJobID.Unlock()

	var r [jobIDRandomLen]byte
	_, _ = rand.Read(r[:]) // crypto/rand.Read never fails (it crashes the program instead)
	b := make([]byte, 0, len(jobIDTimeLayout)+1+jobIDRandomLen)
	b = t.AppendFormat(b, jobIDTimeLayout)
	b = append(b, '-')
	for _, c := range r {
		b = append(b, jobIDAlphabet[c&31])
	}
	return string(b)
}
