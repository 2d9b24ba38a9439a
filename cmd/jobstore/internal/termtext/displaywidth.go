package termtext

import (
	"strings"

	"github.com/mattn/go-runewidth"
)

// This file measures text as a terminal shows it, in Cells: a wide (East
// Asian) character or an emoji takes two, a combining mark or a zero-width
// joiner none, a grapheme cluster (an emoji sequence) as many as its
// widest part (go-runewidth, which reads ambiguous-width characters as
// narrow unless the locale is East Asian or RUNEWIDTH_EASTASIAN=1).

// Cells is the number of terminal columns s takes.
func Cells(s string) int { return runewidth.StringWidth(s) }

// FitCells cuts s to at most n Cells, marking a cut with "...".
func FitCells(s string, n int) string {
	if Cells(s) <= n {
		return s
	}
	if n <= 3 {
		return strings.Repeat(".", max(n, 0))
	}
	return runewidth.Truncate(s, n, "...")
}

// PadCells is s followed by blanks up to n Cells.
func PadCells(s string, n int) string {
	return s + strings.Repeat(" ", max(n-Cells(s), 0))
}
