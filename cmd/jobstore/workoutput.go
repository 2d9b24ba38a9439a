package main

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
)

// maxProgressLine is the longest line read as a progress line; a longer
// one is kept in stdout.log and otherwise ignored.
const maxProgressLine = 4096

// progressWriter passes the command's standard output on to the job's
// stdout.log (out, which remembers its own write errors: see cappedLog)
// and reports each line "progress FRACTION [MESSAGE]" to report, keeping
// it out of stdout.log (every other line is kept, bytes unchanged). A
// line is held back only while it may still be a progress line (it
// starts "progress" and a blank, and is not over maxProgressLine); any
// other is passed on as it comes. The first line that looks meant as a
// progress line but is not (looksLikeProgress) goes to unparsed, once. It
// never fails, so the command never blocks on a full pipe.
type progressWriter struct {
	out      io.Writer
	report   func(fraction float64, message string)
	unparsed func(line string) // nil: nothing is said

	mu     sync.Mutex
	line   []byte // the current line, up to maxProgressLine+1 bytes
	long   bool   // the current line is longer than that
	passed bool   // the current line is not a progress line: written as it comes
	warned bool   // unparsed was called
}

func (w *progressWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	total := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		chunk := p
		if i >= 0 {
			chunk = p[:i]
		}
		held := !w.passed
		if !w.long {
			if len(w.line)+len(chunk) > maxProgressLine {
				w.long = true
			} else {
				w.line = append(w.line, chunk...)
			}
		}
		if held && (w.long || !mayBeProgress(w.line)) {
			w.pass(chunk)
		} else if w.passed {
			_, _ = w.out.Write(chunk) // out remembers its first error
		}
		if i < 0 {
			break
		}
		w.endLine()
		p = p[i+1:]
	}
	return total, nil
}

// pass writes what was held of the current line, then chunk, its next
// bytes, and passes the rest of the line on as it comes.
func (w *progressWriter) pass(chunk []byte) {
	w.passed = true
	if w.long { // w.line holds the bytes before chunk
		_, _ = w.out.Write(w.line)
		_, _ = w.out.Write(chunk)
		w.line = w.line[:0]
		return
	}
	_, _ = w.out.Write(w.line) // chunk included
}

// Close reports the last line if it had no newline.
func (w *progressWriter) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.end(false)
	return nil
}

func (w *progressWriter) endLine() { w.end(true) }

// end ends the current line, newline or not (the output's last line).
func (w *progressWriter) end(newline bool) {
	line := string(w.line)
	f, msg, ok := parseProgress(line)
	switch {
	case !w.passed && ok:
		w.report(f, msg) // kept out of stdout.log
	default:
		if !w.passed {
			_, _ = w.out.Write(w.line)
		}
		if newline {
			_, _ = w.out.Write([]byte{'\n'})
		}
		if !w.long && !w.warned && w.unparsed != nil && looksLikeProgress(line) {
			w.warned = true
			w.unparsed(line)
		}
	}
	w.line, w.long, w.passed = w.line[:0], false, false
}

// mayBeProgress reports whether line, the start of a line, may still turn
// out a progress line: it is a prefix of "progress", or starts "progress"
// and a blank.
func mayBeProgress(line []byte) bool {
	const word = "progress"
	if len(line) <= len(word) {
		return string(line) == word[:len(line)]
	}
	return string(line[:len(word)]) == word && (line[len(word)] == ' ' || line[len(word)] == '\t')
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
