package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/jobview"
	"github.com/axqua/jobstore/cmd/jobstore/internal/termtext"
)

// This file draws list --watch on a terminal: the list table fitted to the
// terminal's width and height and redrawn in place. What it draws comes
// from the listWatcher (listwatch.go), which gathers it.

// redraw redraws the table in place, footer as its last line: the cursor
// goes back up over the lines drawn before, each line is rewritten and the
// rest of it cleared, and whatever is left below is cleared. No line
// reaches the terminal's last column (see fitStatusLine), so none wraps and
// the count of lines to go back up over is exact; and the lines are cut to
// the terminal's height less one row, since the cursor cannot go above the
// top row.
func (lw *listWatcher) redraw(footer string) {
	lines := screenLines(lw.root, lw.entries(), time.Now(), lw.cancelOf, footer, lw.term.width(), lw.term.height())
	var s strings.Builder
	if lw.drawn > 0 {
		fmt.Fprintf(&s, "\r\x1b[%dA", lw.drawn)
	}
	for _, l := range lines {
		s.WriteString(l + "\x1b[K\n")
	}
	s.WriteString("\x1b[J")
	io.WriteString(lw.out, s.String())
	lw.drawn = len(lines)
}

// stopped ends list --watch's display: on a terminal the table is drawn a
// last time, as it stands, with a last line saying the watch stopped (and
// by which signal); otherwise that line is printed.
func (lw *listWatcher) stopped() {
	if lw.asJSON {
		lw.printJSON("stopped", nil)
		return
	}
	line := "stopped watching " + lw.root
	if stop := stopCause(lw.ctx); stop != nil {
		line = "stopped (" + signalName(stop.sig) + ") watching " + lw.root
	}
	if lw.term == nil {
		fmt.Fprintln(lw.out, line)
		return
	}
	lw.redraw(line)
}

// screenLines is the table of entries as a terminal of cols columns and
// rows rows shows it: fitted to the width (fitTable), the reasons of the
// unreadable jobs under it, then footer; every line cut to cols-1 cells,
// and the lines cut to rows-1, the last one then counting those left out.
func screenLines(root string, entries []jobstore.Entry, now time.Time,
	cancelOf func(jobstore.JobDir) (*jobstore.CancelRequest, jobview.RecordInfo), footer string, cols, rows int) []string {
	budget := max(cols-1, 0)
	var lines []string
	if len(entries) == 0 {
		lines = append(lines, fmt.Sprintf("no jobs under %s", root))
	} else {
		if len(entries)+3 > max(rows-1, 1) {
			entries = urgentFirst(entries) // what is cut is what needs no one
		}
		lines = append(lines, fitTable(tableRows(entries, now, cancelOf), budget)...)
		var b strings.Builder
		writeUnreadable(&b, entries)
		if s := strings.TrimSuffix(b.String(), "\n"); s != "" {
			lines = append(lines, strings.Split(s, "\n")...)
		}
	}
	lines = append(lines, "", footer)
	if room := max(rows-1, 1); len(lines) > room {
		more := len(lines) - (room - 1)
		lines = append(lines[:room-1], fmt.Sprintf("... %d more lines: a taller terminal shows them", more))
	}
	for i, l := range lines {
		lines[i] = termtext.FitCells(termtext.EscapeTerminal(l), budget)
	}
	return lines
}

// urgentFirst is entries with the jobs that need attention first: running,
// then failed, lost and unreadable ones, then queued, then the rest, each
// group in the order it had.
func urgentFirst(entries []jobstore.Entry) []jobstore.Entry {
	rank := func(en jobstore.Entry) int {
		switch jobview.EntryState(en) {
		case string(jobstore.Running):
			return 0
		case string(jobstore.Failed), string(jobstore.Lost), jobview.UnreadableState:
			return 1
		case string(jobstore.Queued), jobview.NoStatusState:
			return 2
		}
		return 3
	}
	out := slices.Clone(entries)
	slices.SortStableFunc(out, func(a, b jobstore.Entry) int { return rank(a) - rank(b) })
	return out
}
