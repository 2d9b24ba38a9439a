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
// replaced.
const (
	stdoutFile = "stdout.log"
	stderrFile = "stderr.log"
)

// maxProgressLine is the longest line read as a progress line; a longer
// one is kept in stdout.log and otherwise ignored.
const maxProgressLine = 4096

// progressWriter passes the command's standard output on to the job's
// stdout.log and reports each line "progress FRACTION [MESSAGE]" to
// report. A write error of the file is remembered (Err) and the rest of the
// output is still read, so the command never blocks on a full pipe.
type progressWriter struct {
	out    io.Writer
	report func(fraction float64, message string)

	mu      sync.Mutex
	line    []byte // the current line, up to maxProgressLine+1 bytes
	long    bool   // the current line is longer than that
	written int64
	err     error // the first write error of out
}

func (w *progressWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	total := len(p)
	if w.err == nil {
		n, err := w.out.Write(p)
		w.written += int64(n)
		if err != nil {
			w.err = fmt.Errorf("after %d bytes: %w", w.written, err)
		}
	}
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

// Err is the first error writing stdout.log, if any.
func (w *progressWriter) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

func (w *progressWriter) endLine() {
	if !w.long {
		if f, msg, ok := parseProgress(string(w.line)); ok {
			w.report(f, msg)
		}
	}
	w.line, w.long = w.line[:0], false
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
