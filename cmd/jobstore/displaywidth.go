package main

import (
	"strings"

	"github.com/mattn/go-runewidth"
)

// This file measures text as a terminal shows it, in cells: a wide (East
// Asian) character or an emoji takes two, a combining mark or a zero-width
// joiner none, a grapheme cluster (an emoji sequence) as many as its
// widest part (go-runewidth, which reads ambiguous-width characters as
// narrow unless the locale is East Asian or RUNEWIDTH_EASTASIAN=1).

// cells is the number of terminal columns s takes.
func cells(s string) int { return runewidth.StringWidth(s) }

// fitCells cuts s to at most n cells, marking a cut with "...".
func fitCells(s string, n int) string {
	if cells(s) <= n {
		return s
	}
	if n <= 3 {
		return strings.Repeat(".", max(n, 0))
	}
	return runewidth.Truncate(s, n, "...")
}

// padCells is s followed by blanks up to n cells.
func padCells(s string, n int) string {
	return s + strings.Repeat(" ", max(n-cells(s), 0))
}
