package main

import (
	"fmt"

	"github.com/axqua/jobstore"
)

// This file sizes the line that watch redraws on a terminal. A redrawn line
// must never wrap: '\r' returns to the start of the last screen row only, so
// every redraw of a wrapped line leaves a new row behind.

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
