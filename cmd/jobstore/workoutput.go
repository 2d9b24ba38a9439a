package main

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
)

// The files in a job directory that keep what a job's command wrote. They
// are not records: jobstore's readers, check and the sweeper leave them
// alone (no dot, so no temp name), and they are appended to, never
// replaced; past the worker's --log-limit their start is cut (cappedLog).
const (
	stdoutFile = "stdout.log"
	stderrFile = "stderr.log"
)

// maxProgressLine is the longest line read as a progress line; a longer
// one is kept in stdout.log and otherwise ignored.
const maxProgressLine = 4096

// progressWriter passes the command's standard output on to the job's
// stdout.log (out, which remembers its own write errors: see cappedLog)
// and reports each line "progress FRACTION [MESSAGE]" to report. The
// first line that looks meant as one but is not (looksLikeProgress) goes
// to unparsed, once. It never fails, so the command never blocks on a
// full pipe.
type progressWriter struct {
	out      io.Writer
	report   func(fraction float64, message string)
	unparsed func(line string) // nil: nothing is said

	mu     sync.Mutex
	line   []byte // the current line, up to maxProgressLine+1 bytes
	long   bool   // the current line is longer than that
	warned bool   // unparsed was called
}

func (w *progressWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	total := len(p)
	_, _ = w.out.Write(p) // out remembers its first error
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		chunk := p
		if i >= 0 {
			chunk = p[:i]
		}
		if !w.long {
			if len(w.line)+len(chunk) > maxProgressLine {
				w.long, w.line = true, w.line[:0]
			} else {
				w.line = append(w.line, chunk...)
			}
		}
		if i < 0 {
			break
		}
		w.endLine()
		p = p[i+1:]
	}
	return total, nil
}

// Close reports the last line if it had no newline.
func (w *progressWriter) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.endLine()
	return nil
}

func (w *progressWriter) endLine() {
	if !w.long {
		line := string(w.line)
		if f, msg, ok := parseProgress(line); ok {
			w.report(f, msg)
		} else if !w.warned && w.unparsed != nil && looksLikeProgress(line) {
			w.warned = true
			w.unparsed(line)
		}
	}
	w.line, w.long = w.line[:0], false
}

// looksLikeProgress reports whether line was likely meant as a progress
// line: its first word is "progress" in any case, maybe followed by a
// colon or an equals sign ("Progress: 0.8", "progress=50%").
func looksLikeProgress(line string) bool {
	word := strings.TrimLeft(line, " \t")
	if i := strings.IndexAny(word, " \t:="); i >= 0 {
		word = word[:i]
	}
	return strings.EqualFold(strings.TrimSuffix(word, "\r"), "progress")
}

// maxQuotedLine is how much of a line notProgressNote quotes.
const maxQuotedLine = 80

// notProgressNote is what the worker says of a line that looks meant as a
// progress line but is not one: the line, quoted, and the form expected.
func notProgressNote(line string) string {
	line = strings.TrimSuffix(line, "\r")
	if len(line) > maxQuotedLine {
		line = strings.ToValidUTF8(line[:maxQuotedLine], "") + "..."
	}
	return fmt.Sprintf("the output line %s was not taken as progress: the form is %q, FRACTION a number from 0 to 1 (%q); "+
		"later such lines of this job are not reported", strconv.Quote(line), "progress FRACTION [MESSAGE]", "progress 0.5 half way")
}

// parseProgress reads "progress FRACTION [MESSAGE]": the word, blanks, a
// number within [0, 1], and optionally blanks and a message (kept as
// written, without a trailing carriage return).
func parseProgress(line string) (fraction float64, message string, ok bool) {
	line = strings.TrimSuffix(line, "\r")
	rest, found := strings.CutPrefix(line, "progress")
	if !found || rest == "" || (rest[0] != ' ' && rest[0] != '\t') {
		return 0, "", false
	}
	rest = strings.TrimLeft(rest, " \t")
	num, msg := rest, ""
	if i := strings.IndexAny(rest, " \t"); i >= 0 {
		num, msg = rest[:i], rest[i:]
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || !(f >= 0 && f <= 1) {
		return 0, "", false
	}
	return f, strings.TrimLeft(msg, " \t"), true
}
