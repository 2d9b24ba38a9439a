package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/axqua/jobstore"
)

// isTerminal reports whether w is a terminal (a character device), without
// a dependency on x/term. Pipes, files and /dev/null are not.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	null, err := os.Stat(os.DevNull) // a character device too, but nobody watches it
	return err != nil || !os.SameFile(fi, null)
}

// fmtTime prints a timestamp in UTC to the second: 2026-11-30T09:35:40Z.
func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

func fmtTimePtr(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return fmtTime(*t)
}

// fmtAge prints a duration in at most two units: 850ms, 3.2s, 42s, 5m12s,
// 3h05m, 2d03h.
func fmtAge(d time.Duration) string {
	switch {
	case d < 0:
		return "-" + fmtAge(-d)
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < 10*time.Second:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	default:
		return fmt.Sprintf("%dd%02dh", int(d.Hours())/24, int(d.Hours())%24)
	}
}

// fmtProgress prints a fraction as a percentage, "-" when unknown.
func fmtProgress(p *float64) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprintf("%d%%", int(*p*100+1e-9))
}

// barWidth is the number of cells of the progress bar.
const barWidth = 20

// progressBar draws p as [#####---------------]; unknown progress is all '?'.
func progressBar(p *float64) string {
	if p == nil {
		return "[" + strings.Repeat("?", barWidth) + "]"
	}
	n := int(*p*barWidth + 1e-9)
	n = min(max(n, 0), barWidth)
	return "[" + strings.Repeat("#", n) + strings.Repeat("-", barWidth-n) + "]"
}

// truncate cuts s to at most n runes, marking the cut with "...".
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:max(n-3, 0)]) + "..."
}

// oneLine folds s onto one line: an error message must not break the
// "errors are one line" rule because a record held a newline.
func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\r\n", " ")
	return strings.NewReplacer("\n", " ", "\r", " ").Replace(s)
}

// writeJSON prints v as indented JSON, without HTML escaping (as the
// records themselves are written).
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// errorJSON is how --json output reports an error.
type errorJSON struct {
	Kind    string `json:"kind"`              // jobstore.ErrorCode of the error
	Subject string `json:"subject,omitempty"` // the field or record concerned
	Message string `json:"message"`           // the whole error, as printed on stderr
	Remedy  string `json:"remedy,omitempty"`
}

func newErrorJSON(err error) *errorJSON {
	if err == nil {
		return nil
	}
	j := &errorJSON{Kind: jobstore.ErrorCode(err), Message: oneLine(errorLine(err))}
	var e *jobstore.Error
	if errors.As(err, &e) {
		j.Subject, j.Remedy = e.Subject, e.Remedy
	}
	return j
}

// problem splits an error into what a report line shows: the subject (a
// field, or the record's file name when the error names none), what went
// wrong, and the remedy.
func problem(err error, file string) (subject, what, remedy string) {
	subject = file
	var e *jobstore.Error
	if !errors.As(err, &e) {
		return subject, oneLine(err.Error()), ""
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
	return subject, oneLine(what), oneLine(e.Remedy)
}

// plural is "1 job", "2 jobs".
func plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
