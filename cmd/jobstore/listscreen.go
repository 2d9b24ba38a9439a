package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/axqua/jobstore"
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
	lines := screenLines(lw.root, lw.entries(), time.Now(), lw.cancelOf, footer, lw.width(), lw.height())
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
	if lw.width == nil {
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
	cancelOf func(jobstore.JobDir) (*jobstore.CancelRequest, recordInfo), footer string, cols, rows int) []string {
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
		lines[i] = fitCells(escapeTerminal(l), budget)
	}
	return lines
}

// minIDCells is the fewest cells an ID is shortened to.
const minIDCells = 10

// fitTable lays out the list table (a header line, then rows) for lines of
// at most budget cells, columns aligned two blanks apart. MESSAGE, the last
// column, gets what is left of the line, cut to fit; when less than
// minMessageCells are left (or no row has a message) it is left out. When
// the table is still wider, columns go in this order until it fits:
// UPDATED, AGE, KIND; then IDs are shortened in their middle (a generated
// ID's start is its date, its end what tells it apart), to minIDCells at
// least; then STATE is cut. So a job's state and progress are the last
// things a narrow terminal loses.
func fitTable(rows [][tableCols]string, budget int) []string {
	all := append([][tableCols]string{tableHeader()}, rows...)
	var widths [tableCols]int
	for _, r := range all {
		for c, cell := range r {
			widths[c] = max(widths[c], cells(escapeTerminal(cell)))
		}
	}
	shown := []int{colID, colKind, colState, colProgress, colUpdated, colAge}
	total := func() int {
		n := 2 * (len(shown) - 1)
		for _, c := range shown {
			n += widths[c]
		}
		return n
	}
	if left := budget - total() - 2; hasMessages(rows) && left >= minMessageCells {
		widths[colMessage] = min(widths[colMessage], left)
		shown = append(shown, colMessage)
	}
	for _, drop := range []int{colUpdated, colAge, colKind} {
		if total() <= budget {
			break
		}
		shown = without(shown, drop)
	}
	if over := total() - budget; over > 0 {
		widths[colID] -= min(over, max(widths[colID]-minIDCells, 0))
	}
	if over := total() - budget; over > 0 {
		widths[colState] = max(widths[colState]-over, 1)
	}
	lines := make([]string, 0, len(all))
	for _, r := range all {
		var b strings.Builder
		for i, c := range shown {
			cell := escapeTerminal(r[c])
			switch c {
			case colID:
				cell = shortenMiddle(cell, widths[c])
			default:
				cell = fitCells(cell, widths[c])
			}
			b.WriteString(cell)
			if i < len(shown)-1 {
				b.WriteString(strings.Repeat(" ", widths[c]-cells(cell)+2))
			}
		}
		lines = append(lines, strings.TrimRight(b.String(), " "))
	}
	return lines
}

// minMessageCells is the narrowest MESSAGE column shown.
const minMessageCells = 12

// without is cols less col.
func without(cols []int, col int) []int {
	var out []int
	for _, c := range cols {
		if c != col {
			out = append(out, c)
		}
	}
	return out
}

// shortenMiddle cuts s to at most n cells by replacing its middle with
// "...", keeping more of its end than of its start.
func shortenMiddle(s string, n int) string {
	if cells(s) <= n {
		return s
	}
	if n <= 3 {
		return fitCells(s, n)
	}
	r := []rune(s)
	keep := n - 3
	head, tail := keep/2, keep-keep/2
	// cells counts a non-ASCII rune as two: trim until it fits.
	for head+tail > 0 {
		out := string(r[:head]) + "..." + string(r[len(r)-tail:])
		if cells(out) <= n {
			return out
		}
		if tail > head {
			tail--
		} else {
			head--
		}
	}
	return "..."
}

// urgentFirst is entries with the jobs that need attention first: running,
// then failed, lost and unreadable ones, then queued, then the rest, each
// group in the order it had.
func urgentFirst(entries []jobstore.Entry) []jobstore.Entry {
	rank := func(en jobstore.Entry) int {
		switch entryState(en) {
		case string(jobstore.Running):
			return 0
		case string(jobstore.Failed), string(jobstore.Lost), unreadableState:
			return 1
		case string(jobstore.Queued), noStatusState:
			return 2
		}
		return 3
	}
	out := slices.Clone(entries)
	slices.SortStableFunc(out, func(a, b jobstore.Entry) int { return rank(a) - rank(b) })
	return out
}
