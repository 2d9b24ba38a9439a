package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"

	"github.com/axqua/jobstore"
)

// This file sizes the line that watch redraws on a terminal (and the table
// list --watch redraws). A redrawn line
// must never wrap: '\r' returns to the start of the last screen row only, so
// every redraw of a wrapped line leaves a new row behind.

// defaultTermWidth is assumed when a terminal does not report its size.
const defaultTermWidth = 80

// isTerminal reports whether w is a terminal. Pipes, files and /dev/null
// are not.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// terminalWidth returns a function that reports w's width in columns at the
// moment it is called (a terminal can be resized while watched), or
// defaultTermWidth when w does not say.
func terminalWidth(w io.Writer) func() int {
	return func() int {
		if f, ok := w.(*os.File); ok {
			if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 0 {
				return cols
			}
		}
		return defaultTermWidth
	}
}

// defaultTermHeight is assumed when a terminal does not report its size.
const defaultTermHeight = 24

// terminalHeight is terminalWidth for the number of rows: a display redrawn
// in place by moving the cursor up must fit in them, since the cursor
// cannot move above the top row.
func terminalHeight(w io.Writer) func() int {
	return func() int {
		if f, ok := w.(*os.File); ok {
			if _, rows, err := term.GetSize(int(f.Fd())); err == nil && rows > 0 {
				return rows
			}
		}
		return defaultTermHeight
	}
}

// cells is the number of terminal columns s takes at most: one for a
// printable ASCII character, two for any other (wide CJK characters and
// emoji take two; counting every non-ASCII rune as two may end a line
// early, never late).
func cells(s string) int {
	n := 0
	for _, r := range s {
		n += runeCells(r)
	}
	return n
}

func runeCells(r rune) int {
	if r < 0x80 {
		return 1
	}
	return 2
}

// fitCells cuts s to at most n cells, marking a cut with "...".
func fitCells(s string, n int) string {
	if cells(s) <= n {
		return s
	}
	if n <= 3 {
		return strings.Repeat(".", max(n, 0))
	}
	var b strings.Builder
	used := 0
	for _, r := range s {
		if used+runeCells(r) > n-3 {
			break
		}
		b.WriteRune(r)
		used += runeCells(r)
	}
	return b.String() + "..."
}

// fitStatusLine is st as one line of at most cols-1 cells (the last column
// is left free: some terminals wrap as soon as it is written). It keeps as
// much as fits, in this order: the state, the percentage, the seq, a
// progress bar of 20 or 10 cells, the message (cut with "...").
func fitStatusLine(st *jobstore.JobStatus, cols int) string {
	budget := max(cols-1, 0)
	msg := escapeTerminal(oneLine(st.Message))
	state := escapeTerminal(string(st.State))
	pct := fmtProgress(st.Progress)
	// Layouts from the richest to the barest; the first whose fixed part
	// leaves room for the message (or minMessage cells of it) wins.
	const minMessage = 12
	layouts := []string{
		fmt.Sprintf("%-9s %s %4s  seq %d", state, progressBarN(st.Progress, barWidth), pct, st.Seq),
		fmt.Sprintf("%-9s %s %4s  seq %d", state, progressBarN(st.Progress, barWidth/2), pct, st.Seq),
		fmt.Sprintf("%s %s seq %d", state, pct, st.Seq),
		fmt.Sprintf("%s %s", state, pct),
	}
	for _, head := range layouts[:len(layouts)-1] {
		room := budget - cells(head) - 2 // two blanks before the message
		switch {
		case msg == "" && cells(head) <= budget:
			return head
		case msg != "" && room >= min(cells(msg), minMessage):
			return head + "  " + fitCells(msg, room)
		}
	}
	head := layouts[len(layouts)-1]
	if room := budget - cells(head) - 2; msg != "" && room >= 4 {
		return head + "  " + fitCells(msg, room)
	}
	return fitCells(head, budget)
}
