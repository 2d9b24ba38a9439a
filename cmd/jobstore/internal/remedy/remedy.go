package remedy

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/termtext"
)

// This file decides the remedy shown with an error, on stderr and in
// --json output alike (remedy is the only place that does). An error is
// shown as the library's text without its remedy (ErrorMessage), then
// ". Remedy: " and one remedy, in the command line's words, chosen in this
// order:
//
//  1. a command-line mistake: its own (usually: read the command's help);
//  2. a remedy a command gave the error because it knows what its argument
//     was meant to be (WithCLIRemedy, JobDirArgument);
//  3. the CLI's remedy for the kind of error (CodeRemedy, by
//     jobstore.ErrorCode), which names jobstore commands and flags; for
//     an I/O error, one chosen by its cause.
//
// The library's own remedies are never shown: they are written for Go
// programs (they name functions and options a user of the command cannot
// call), and the kind of an error is its code, never its text.

// remedied gives an error the remedy the CLI knows fits it better (the
// command knows what its argument was meant to be).
type remedied struct {
	err    error
	remedy string
}

func (r *remedied) Error() string { return r.err.Error() }
func (r *remedied) Unwrap() error { return r.err }

// WithCLIRemedy gives err the remedy; nil stays nil.
func WithCLIRemedy(err error, remedy string) error {
	if err == nil {
		return nil
	}
	return &remedied{err: err, remedy: remedy}
}

// NotAJobDirRemedy is the remedy for an argument that should name a job
// directory and does not.
const NotAJobDirRemedy = "give a job directory, ROOT/ID; 'jobstore list ROOT' lists them"

// JobDirArgument is err, from a command whose argument dir names a job
// directory, with NotAJobDirRemedy when dir is not a directory at all (a
// file, a device): the remedy for that (remove or rename it) suits a job
// directory gone wrong, not a mistyped argument such as /etc/passwd. Any
// other err, and nil, are returned as they are.
func JobDirArgument(err error, dir string) error {
	if err == nil {
		return nil
	}
	if fi, serr := os.Stat(dir); serr != nil || fi.IsDir() {
		return err
	}
	return WithCLIRemedy(err, NotAJobDirRemedy)
}

// CliRemedy is the remedy shown for err, chosen as the comment at the top
// of this file says.
func CliRemedy(err error) string {
	var r *remedied
	var ue *UsageError
	switch {
	case errors.As(err, &ue):
		return ue.RemedyText()
	case errors.As(err, &r):
		return r.remedy
	}
	remedy, _ := CodeRemedy(err)
	return remedy
}

// CodeRemedy is the CLI's remedy for err by its kind, and whether the CLI
// knows the kind (a code a newer library added gets the remedy of an I/O
// error, by its cause).
func CodeRemedy(err error) (string, bool) {
	switch jobstore.ErrorCode(err) {
	case jobstore.CodeNotJob:
		return NotAJobDirRemedy, true
	case jobstore.CodeExists:
		return "choose another --id; 'jobstore show ROOT/ID' shows the existing job", true
	case jobstore.CodeCorrupt:
		return "restore the file from a backup or remove it; 'jobstore check ROOT' finds others", true
	case jobstore.CodeTooLarge:
		return "this is too large to be a record: restore the file from a backup or remove it", true
	case jobstore.CodeInvalid:
		if subject := subjectOf(err); subject != "" {
			return fmt.Sprintf("correct the %s field; 'jobstore check ROOT' lists every problem", subject), true
		}
		return "correct the value; 'jobstore check ROOT' lists every problem", true
	case jobstore.CodeWrongState:
		return "'jobstore show ROOT/ID' shows the job's state; nothing was changed", true
	case jobstore.CodeNewerSchema:
		return "upgrade jobstore ('jobstore --version' shows this one); the file is left as it is", true
	case jobstore.CodeNoMigration:
		return "use the jobstore release that wrote the record, or correct its schema_version", true
	case jobstore.CodeLocked:
		return "another process runs this job: wait for it ('jobstore wait ROOT/ID')", true
	case jobstore.CodeCancelRequested:
		return "the job was asked to stop ('jobstore show ROOT/ID' says by whom); submit a new job to run it", true
	case jobstore.CodeNotRegular:
		return "remove or rename it: jobstore never follows a link nor opens a FIFO, socket or device", true
	case jobstore.CodeNotOwner:
		return "the job was taken over after this runner's lease lapsed; 'jobstore show ROOT/ID' says by whom", true
	case jobstore.CodeNotDue:
		return "the job is not due yet ('jobstore show ROOT/ID' says when): 'jobstore work' starts it then", true
	case jobstore.CodeTimeout:
		return "the time given ran out first: give it longer, or see why nothing happened ('jobstore list ROOT')", true
	case jobstore.CodeInterrupted:
		return "it was stopped before it was done: run it again", true
	case jobstore.CodeIO:
		return ioRemedy(err), true
	}
	return ioRemedy(err), false
}

// subjectOf is the field err is about: the Subject of the first
// *jobstore.Error in its chain that names one; "" when none does.
func subjectOf(err error) string {
	var je *jobstore.Error
	for errors.As(err, &je) {
		if je.Subject != "" {
			return je.Subject
		}
		err = je.Err
	}
	return ""
}

// ioRemedy is the remedy of an I/O error, by its cause.
func ioRemedy(err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "check the path"
	case errors.Is(err, fs.ErrPermission):
		return "give this user read access to the file, write access to its directory (see docs/guarantees.md)"
	case isDiskFull(err):
		return "free some disk space, then try again"
	default:
		return "check the path, the permissions and the disk, then try again"
	}
}

// ErrorMessage is err as one line without any remedy: what went wrong, to
// which file. It starts with "jobstore".
func ErrorMessage(err error) string {
	var ue *UsageError
	if errors.As(err, &ue) {
		return termtext.OneLine(ue.Error())
	}
	s := withoutRemedy(err).Error()
	if !strings.HasPrefix(s, "jobstore") {
		s = "jobstore: " + s
	}
	return termtext.OneLine(s)
}

// withoutRemedy is err with the library's remedies taken out of its text.
func withoutRemedy(err error) error {
	var r *remedied
	if errors.As(err, &r) && err == error(r) {
		return withoutRemedy(r.err)
	}
	e, ok := err.(*jobstore.Error)
	if !ok {
		return err
	}
	c := *e
	c.Remedy = ""
	if c.Err != nil {
		c.Err = withoutRemedy(c.Err)
	}
	return &c
}

// ErrorLine is an error as printed on stderr: the message, then the remedy.
func ErrorLine(err error) string {
	return strings.TrimSuffix(ErrorMessage(err), ".") + ". Remedy: " + termtext.OneLine(CliRemedy(err))
}
