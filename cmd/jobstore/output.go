package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/axqua/jobstore"
)

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

// progressBar draws p as [#####---------------]; an unknown progress (nil)
// as an empty bar that says so, [      unknown       ].
func progressBar(p *float64) string { return progressBarN(p, barWidth) }

// progressBarN is progressBar with width cells.
func progressBarN(p *float64, width int) string {
	if p == nil {
		word := "unknown"
		if width < len(word) {
			word = "?"
		}
		if width < len(word) {
			return "[" + strings.Repeat(" ", width) + "]"
		}
		left := (width - len(word)) / 2
		return "[" + strings.Repeat(" ", left) + word + strings.Repeat(" ", width-len(word)-left) + "]"
	}
	n := int(*p*float64(width) + 1e-9)
	n = min(max(n, 0), width)
	return "[" + strings.Repeat("#", n) + strings.Repeat("-", width-n) + "]"
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

// errorJSON is how --json output reports an error. Every key is always
// present.
type errorJSON struct {
	Kind    string `json:"kind"`    // jobstore.ErrorCode of the error
	Subject string `json:"subject"` // the field or record concerned; "" when none
	Message string `json:"message"` // what went wrong, as on stderr without the remedy
	Remedy  string `json:"remedy"`  // what to do, as on stderr
}

func newErrorJSON(err error) *errorJSON {
	if err == nil {
		return nil
	}
	j := &errorJSON{Kind: string(jobstore.ErrorCode(err)), Message: errorMessage(err), Remedy: oneLine(cliRemedy(err))}
	var e *jobstore.Error
	if errors.As(err, &e) {
		j.Subject = e.Subject
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
		return subject, oneLine(err.Error()), oneLine(cliRemedy(err))
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
	return subject, oneLine(what), oneLine(cliRemedy(err))
}

// plural is "1 job", "2 jobs".
func plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
