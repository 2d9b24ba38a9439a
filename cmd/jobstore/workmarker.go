package main

import (
	"fmt"
	"regexp"
	"strconv"
	"time"
)

// attemptMarker opens each attempt's part of stdout.log and stderr.log,
// which run all of a job's attempts together: its number, when the worker
// began it (UTC, microseconds) and the worker's host. docs/format.md
// ("Output of jobstore work") documents it; attemptMarkerRE reads it back
// (jobstore logs --attempt).
const attemptMarker = "[jobstore: attempt %d began %s on %s]\n"

var attemptMarkerRE = regexp.MustCompile(`^\[jobstore: attempt (\d+) began \S+ on [^\]\n]*\]$`)

// markerTimeLayout is the time in attemptMarker: RFC 3339, UTC, fixed
// width.
const markerTimeLayout = "2006-01-02T15:04:05.000000Z"

// attemptLine is the marker line of attempt n, begun at t on host.
func attemptLine(n uint64, t time.Time, host string) []byte {
	return fmt.Appendf(nil, attemptMarker, n, t.UTC().Format(markerTimeLayout), host)
}

// markedAttempt is the attempt number a marker line (without its newline)
// names, and whether line is one.
func markedAttempt(line []byte) (uint64, bool) {
	m := attemptMarkerRE.FindSubmatch(line)
	if m == nil {
		return 0, false
	}
	n, err := strconv.ParseUint(string(m[1]), 10, 64)
	return n, err == nil
}

// mark writes line to the log on a line of its own: after a newline when
// the file does not end with one (an earlier attempt's last line that had
// none). Like Write, it never fails: an error is kept (Err).
func (l *cappedLog) mark(line []byte) {
	l.mu.Lock()
	if l.size > l.head && l.err == nil {
		last := make([]byte, 1)
		if _, err := l.f.ReadAt(last, l.size-1); err == nil && last[0] != '\n' {
			line = append([]byte{'\n'}, line...)
		}
	}
	l.mu.Unlock()
	_, _ = l.Write(line)
}
