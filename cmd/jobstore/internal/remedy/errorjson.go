package remedy

import (
	"errors"
	"strings"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/termtext"
)

// ErrorJSON is how --json output reports an error. Every key is always
// present.
type ErrorJSON struct {
	Kind    string `json:"kind"`    // jobstore.ErrorCode of the error
	Subject string `json:"subject"` // the field or record concerned; "" when none
	Message string `json:"message"` // what went wrong, as on stderr without the remedy
	Remedy  string `json:"remedy"`  // what to do, as on stderr
}

func NewErrorJSON(err error) *ErrorJSON {
	if err == nil {
		return nil
	}
	j := &ErrorJSON{Kind: string(jobstore.ErrorCode(err)), Message: ErrorMessage(err), Remedy: termtext.OneLine(CliRemedy(err))}
	var e *jobstore.Error
	if errors.As(err, &e) {
		j.Subject = e.Subject
	}
	return j
}

// Problem splits an error into what a report line shows: the subject (a
// field, or the record's file name when the error names none), what went
// wrong, and the remedy.
func Problem(err error, file string) (subject, what, remedy string) {
	subject = file
	var e *jobstore.Error
	if !errors.As(err, &e) {
		return subject, termtext.OneLine(err.Error()), termtext.OneLine(CliRemedy(err))
	}
	if e.Subject != "" {
		subject = e.Subject
	}
	what = e.Msg
	if what == "" && e.Sentinel != nil {
		what = strings.TrimPrefix(e.Sentinel.Error(), "jobstore: ")
	}
	if e.Err != nil {
		if what != "" {
			what += ": "
		}
		what += e.Err.Error()
	}
	return subject, termtext.OneLine(what), termtext.OneLine(CliRemedy(err))
}
