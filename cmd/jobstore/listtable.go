package main

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/mattn/go-runewidth"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/jobview"
	"github.com/axqua/jobstore/cmd/jobstore/internal/remedy"
	"github.com/axqua/jobstore/cmd/jobstore/internal/termtext"
)

// This file is the list table, as list prints it and list --watch draws it
// (listscreen.go): its cells (tableRows), laid out for a width (fitTable,
// with the table printer's alignRows), and the reasons of the unreadable
// jobs under it.

// printTable prints entries as the list table, then the reasons of the
// unreadable ones. now is the reference for AGE. On a terminal the table
// is fitted to its width (fitTable): the MESSAGE column is cut to what is
// left of the line.
func printTable(e *env, root string, entries []jobstore.Entry, now time.Time) {
	budget := unlimitedCells
	if e.term != nil {
		budget = max(e.term.width()-1, 0)
	}
	writeTable(e.stdout, root, entries, now, jobview.ReadCancel, budget)
}

// unlimitedCells is the budget of a line that may be as long as it takes
// (not a terminal).
const unlimitedCells = math.MaxInt / 2

// writeTable is printTable to w, for lines of at most budget cells, with
// each job's cancel request from cancelOf (readCancel, or what list
// --watch knows).
func writeTable(w io.Writer, root string, entries []jobstore.Entry, now time.Time,
	cancelOf func(jobstore.JobDir) (*jobstore.CancelRequest, jobview.RecordInfo), budget int) {
	if len(entries) == 0 {
		fmt.Fprintf(w, "no jobs under %s\n", root)
		return
	}
	for _, l := range fitTable(tableRows(entries, now, cancelOf), budget) {
		fmt.Fprintln(w, l)
	}
	writeUnreadable(w, entries)
}

// The columns of the list table.
const (
	colID = iota
	colKind
	colState
	colProgress
	colUpdated
	colAge
	colMessage // the runner's message, or the error of a failed or lost job
	tableCols
)

// tableHeader names the columns of the list table.
func tableHeader() [tableCols]string {
	return [tableCols]string{"ID", "KIND", "STATE", "PROGRESS", "UPDATED", "AGE", "MESSAGE"}
}

// hasMessages reports whether any row has a message: without one, the
// table has no MESSAGE column.
func hasMessages(rows [][tableCols]string) bool {
	for _, r := range rows {
		if r[colMessage] != "" {
			return true
		}
	}
	return false
}

// tableRows are entries as the cells of the list table; now is the
// reference for AGE.
func tableRows(entries []jobstore.Entry, now time.Time,
	cancelOf func(jobstore.JobDir) (*jobstore.CancelRequest, jobview.RecordInfo)) [][tableCols]string {
	rows := make([][tableCols]string, 0, len(entries))
	for _, en := range entries {
		kind, state, progress, updated, age, msg := "?", "-", "-", "-", "-", ""
		if en.Spec != nil {
			kind = en.Spec.Kind
			age = jobview.FmtAge(now.Sub(en.Spec.SubmittedAt))
		}
		if st := en.Status; st != nil {
			state, progress, updated, msg = string(st.State), jobview.FmtProgress(st.Progress), jobview.FmtTime(st.UpdatedAt), st.Message
			if st.Error != "" && (st.State == jobstore.Failed || st.State == jobstore.Lost) {
				msg = st.Error
			}
		}
		if note := jobview.ScheduleNote(en.Spec, en.Status, now); note != "" {
			state += ", " + note
		}
		if note := jobview.AttemptNote(en.Spec, en.Status); note != "" {
			state += ", " + note
		}
		c, info := cancelOf(en.Dir)
		if note := jobview.CancelNote(c, info, en.Status); note != "" {
			state += ", " + note
		}
		if en.Err != nil {
			state, msg = "unreadable", "" // the reason is under the table
		}
		row := [tableCols]string{en.Dir.ID(), kind, state, progress, updated, age, msg}
		for c := range row {
			row[c] = termtext.EscapeTerminal(termtext.OneLine(row[c])) // a tab or newline would break the table too
		}
		rows = append(rows, row)
	}
	return rows
}

// writeUnreadable prints, under the table, why each unreadable job is.
func writeUnreadable(w io.Writer, entries []jobstore.Entry) {
	var bad []jobstore.Entry
	for _, en := range entries {
		if en.Err != nil {
			bad = append(bad, en)
		}
	}
	if len(bad) > 0 {
		fmt.Fprintf(w, "\n%d unreadable (the job directory is authoritative: fix or remove it):\n", len(bad))
		for _, en := range bad {
			fmt.Fprintf(w, "  %s: %s\n", termtext.EscapeTerminal(en.Dir.ID()), termtext.EscapeTerminal(termtext.OneLine(remedy.ErrorLine(en.Err))))
		}
	}
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
			widths[c] = max(widths[c], termtext.Cells(termtext.EscapeTerminal(cell)))
		}
	}
	shown := []int{colID, colKind, colState, colProgress, colUpdated, colAge}
	total := func() int {
		n := columnGap * (len(shown) - 1)
		for _, c := range shown {
			n += widths[c]
		}
		return n
	}
	if left := budget - total() - columnGap; hasMessages(rows) && left >= minMessageCells {
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
	cut := make([][]string, 0, len(all))
	for _, r := range all {
		row := make([]string, 0, len(shown))
		for _, c := range shown {
			cell := termtext.EscapeTerminal(r[c])
			if c == colID {
				cell = shortenMiddle(cell, widths[c])
			} else {
				cell = termtext.FitCells(cell, widths[c])
			}
			row = append(row, cell)
		}
		cut = append(cut, row)
	}
	lines := alignRows(cut)
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
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
	if termtext.Cells(s) <= n {
		return s
	}
	if n <= 3 {
		return termtext.FitCells(s, n)
	}
	keep := n - 3
	head := runewidth.Truncate(s, keep/2, "")
	r := []rune(s)
	tail, w := len(r), 0
	for tail > 0 && w+runewidth.RuneWidth(r[tail-1]) <= keep-termtext.Cells(head) {
		tail--
		w += runewidth.RuneWidth(r[tail])
	}
	for tail < len(r) && runewidth.RuneWidth(r[tail]) == 0 {
		tail++ // a combining mark whose base was cut goes with it
	}
	return head + "..." + string(r[tail:])
}
