package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"strings"
	"unicode"

	"github.com/axqua/jobstore"
)

// This file decides the remedy shown with an error, on stderr and in
// --json output alike (remedy is the only place that does). An error is
// shown as the library's text without its remedy (errorMessage), then
// ". Remedy: " and one remedy, chosen in this order:
//
//  1. a command-line mistake: its own (usually: read the command's help);
//  2. a remedy a command gave the error because it knows what its argument
//     was meant to be (withCLIRemedy, jobDirArgument);
//  3. for a missing job or a taken job ID (not_job, exists): the CLI's,
//     which names the argument as the user typed it (ROOT/ID, --id);
//  4. the library's own remedy (the outermost one the error carries),
//     unless it speaks to Go programmers: it names a function, a method or
//     an option (WithMaxSize, RebuildIndex, Run.Progress, Flush) that a
//     user of the command cannot call;
//  5. else the CLI's remedy for the kind of error (jobstore.ErrorCode),
//     which names jobstore commands instead; for an error of no kind, one
//     chosen by its cause.

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

// notAJobDirRemedy is the remedy for an argument that should name a job
// directory and does not.
const notAJobDirRemedy = "give a job directory, ROOT/ID; 'jobstore list ROOT' lists them"

// jobDirArgument is err, from a command whose argument dir names a job
// directory, with notAJobDirRemedy when dir is not a directory at all (a
// file, a device): the library's remedy for that (remove or rename it)
// suits a job directory gone wrong, not a mistyped argument such as
// /etc/passwd. Any other err, and nil, are returned as they are.
func jobDirArgument(err error, dir string) error {
	if err == nil {
		return nil
	}
	if fi, serr := os.Stat(dir); serr != nil || fi.IsDir() {
		return err
	}
	return withCLIRemedy(err, notAJobDirRemedy)
}

// cliRemedy is the remedy shown for err, chosen as the comment at the top
// of this file says.
func cliRemedy(err error) string {
	var r *remedied
	var ue *usageError
	switch {
	case errors.As(err, &ue):
		return ue.remedyText()
	case errors.As(err, &r):
		return r.remedy
	}
	switch jobstore.ErrorCode(err) {
	case "not_job":
		return notAJobDirRemedy
	case "exists":
		return "choose another --id; 'jobstore show ROOT/ID' shows the existing job"
	}
	if lib := libraryRemedy(err); lib != "" && !speaksGo(lib) {
		return lib
	}
	return kindRemedy(err)
}

// libraryRemedy is the remedy the library gave err: that of the outermost
// *jobstore.Error in its chain that has one; "" when none has.
func libraryRemedy(err error) string {
	for err != nil {
		var je *jobstore.Error
		if !errors.As(err, &je) {
			return ""
		}
		if je.Remedy != "" {
			return je.Remedy
		}
		err = je.Err
	}
	return ""
}

// kindRemedy is the CLI's remedy for the kind of err, for when the
// library's speaks Go or there is none.
func kindRemedy(err error) string {
	var je *jobstore.Error
	subject := ""
	if errors.As(err, &je) {
		subject = je.Subject
	}
	switch jobstore.ErrorCode(err) {
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
		return "remove or rename it: jobstore never follows a link nor opens a FIFO, socket or device"
	case "not_owner":
		return "this runner's job was taken over after its lease lapsed: stop it; 'jobstore show ROOT/ID' says who replaced it"
	case "cancel_requested":
		return "the job was asked to stop ('jobstore show ROOT/ID' says by whom); submit a new job to run it"
	case "not_due":
		return "the job is not due yet ('jobstore show ROOT/ID' says when): 'jobstore work' starts it then"
	case "timeout":
		return "the time given ran out first: give it longer, or see why nothing happened ('jobstore list ROOT')"
	case "interrupted":
		return "it was stopped before it was done: run it again"
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
		return "give this user read access to the file, write access to its directory (see docs/guarantees.md)"
	case isDiskFull(err):
		return "free some disk space, then try again"
	default:
		return "check the path, the permissions and the disk, then try again"
	}
}

// goWord matches a word of a remedy, with what makes it Go: a dotted name
// (Run.Progress) and a call's parenthesis (Finish(...)).
var goWord = regexp.MustCompile(`[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)*\(?`)

// properNouns are the capitalised words a remedy may use that are not Go.
var properNouns = map[string]bool{"Windows": true, "Unix": true, "Linux": true, "macOS": true, "Python": true}

// speaksGo reports whether a library remedy names Go API: a capitalised
// word that is not an acronym (JSON, NFS, ID), a proper noun (Windows) or
// the first word of a sentence, a mixed-case name (WithMaxSize, NoSync), a
// dotted name (Run.Progress) or a call (Finish(...)).
func speaksGo(remedy string) bool {
	for _, loc := range goWord.FindAllStringIndex(remedy, -1) {
		w := remedy[loc[0]:loc[1]]
		if strings.HasSuffix(w, "(") {
			return true // Finish(...)
		}
		if strings.Contains(w, ".") && strings.IndexFunc(w, unicode.IsUpper) >= 0 {
			return true // Run.Progress, not "e.g."
		}
		first := rune(w[0])
		if !unicode.IsUpper(first) || w == strings.ToUpper(w) || properNouns[w] {
			continue
		}
		if strings.IndexFunc(w[1:], unicode.IsUpper) >= 0 && strings.IndexFunc(w[1:], unicode.IsLower) >= 0 {
			return true // WithMaxSize, NoSync
		}
		before := strings.TrimRight(remedy[:loc[0]], " ")
		if before == "" || strings.HasSuffix(before, ".") {
			continue // a sentence's first word
		}
		return true // Flush, Submit, Close
	}
	return false
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
