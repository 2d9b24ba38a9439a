package main

import (
	"fmt"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/jobview"
	"github.com/axqua/jobstore/cmd/jobstore/internal/termtext"
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
	msg := termtext.EscapeTerminal(termtext.OneLine(st.Message))
	state := termtext.EscapeTerminal(string(st.State))
	pct := jobview.FmtProgress(st.Progress)
	// Layouts from the richest to the barest; the first whose fixed part
	// leaves room for the message (or minMessage cells of it) wins.
	const minMessage = 12
	layouts := []string{
		fmt.Sprintf("%-9s %s %4s  seq %d", state, jobview.ProgressBarN(st.Progress, jobview.BarWidth), pct, st.Seq),
		fmt.Sprintf("%-9s %s %4s  seq %d", state, jobview.ProgressBarN(st.Progress, jobview.BarWidth/2), pct, st.Seq),
		fmt.Sprintf("%s %s seq %d", state, pct, st.Seq),
		fmt.Sprintf("%s %s", state, pct),
	}
	for _, head := range layouts[:len(layouts)-1] {
		room := budget - termtext.Cells(head) - 2 // two blanks before the message
		switch {
		case msg == "" && termtext.Cells(head) <= budget:
			return head
		case msg != "" && room >= min(termtext.Cells(msg), minMessage):
			return head + "  " + termtext.FitCells(msg, room)
		}
	}
	head := layouts[len(layouts)-1]
	if room := budget - termtext.Cells(head) - 2; msg != "" && room >= 4 {
		return head + "  " + termtext.FitCells(msg, room)
	}
	return termtext.FitCells(head, budget)
}
