package main

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/axqua/jobstore"
)

// The library's remedies speak to Go programmers (they name functions and
// options) and some run to several sentences. A CLI user is shown a short
// remedy that names jobstore commands instead, chosen by the kind of error
// (jobstore.ErrorCode); the rest of the error (what happened, to which file) is the
// library's own.

// remedied gives an error the remedy the CLI knows fits it better (the
// command knows what its argument was meant to be).
type remedied struct {
	err    error
	remedy string
}

func (r *remedied) Error() string { return r.err.Error() }
func (r *remedied) Unwrap() error { return r.err }

// withCLIRemedy gives err the remedy; nil stays nil.
func withCLIRemedy(err error, remedy string) error {
	if err == nil {
		return nil
	}
	return &remedied{err: err, remedy: remedy}
}

// cliRemedy is the remedy shown for err: the one a command gave it, or one
// chosen by its kind.
func cliRemedy(err error) string {
	var r *remedied
	var ue *usageError
	var je *jobstore.Error
	switch {
	case errors.As(err, &r):
		return r.remedy
	case errors.As(err, &ue):
		return ue.remedyText()
	}
	subject := ""
	if errors.As(err, &je) {
		subject = je.Subject
	}
	switch jobstore.ErrorCode(err) {
	case "not_job":
		return "give a job directory, ROOT/ID; 'jobstore list ROOT' lists them"
	case "exists":
		return "choose another --id; 'jobstore show ROOT/ID' shows the existing job"
	case "corrupt":
		return "restore the file from a backup or remove it; 'jobstore check ROOT' finds others"
	case "too_large":
		return "this is too large to be a record: restore the file from a backup or remove it"
	case "newer_schema":
		return "upgrade jobstore ('jobstore --version' shows this one); the file is left as it is"
	case "no_migration":
		return "use the jobstore release that wrote the record, or correct its schema_version"
	case "locked":
		return "another process runs this job: wait for it ('jobstore watch ROOT/ID')"
	case "not_regular":
		return "replace it with a regular file (or a real directory); jobstore never follows links"
	case "not_owner":
		return "this runner's job was taken over after its lease lapsed: stop it; 'jobstore show ROOT/ID' says who replaced it"
	case "cancel_requested":
		return "the job was asked to stop ('jobstore show ROOT/ID' says by whom); submit a new job to run it"
	case "invalid":
		if subject != "" {
			return fmt.Sprintf("correct the %s field; 'jobstore check ROOT' lists every problem", subject)
		}
		return "correct the value; 'jobstore check ROOT' lists every problem"
	}
	return ioRemedy(err)
}

// ioRemedy is the remedy of an I/O error, by its cause.
func ioRemedy(err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "check the path"
	case errors.Is(err, fs.ErrPermission):
		return "give this user access to the file and its directory"
	case isDiskFull(err):
		return "free some disk space, then try again"
	default:
		return "check the path, the permissions and the disk, then try again"
	}
}

// errorMessage is err as one line without any remedy: what went wrong, to
// which file. It starts with "jobstore".
func errorMessage(err error) string {
	var ue *usageError
	if errors.As(err, &ue) {
		return oneLine(ue.Error())
	}
	s := withoutRemedy(err).Error()
	if !strings.HasPrefix(s, "jobstore") {
		s = "jobstore: " + s
	}
	return oneLine(s)
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

// errorLine is an error as printed on stderr: the message, then the remedy.
func errorLine(err error) string {
	return strings.TrimSuffix(errorMessage(err), ".") + ". Remedy: " + oneLine(cliRemedy(err))
}
