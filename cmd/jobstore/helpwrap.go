package main

import (
	"strings"
	"unicode"

	"github.com/axqua/jobstore/cmd/jobstore/internal/termtext"
)

// This file fits the help texts to the terminal: lines longer than its
// width are broken at blanks, each continuation indented under the text
// it continues (a table cell's column, or the line's own indent).

// maxHelpWidth is the widest a help line is made on a wide terminal: prose
// much wider than this is hard to read.
const maxHelpWidth = 100

// helpWidth is the width the help texts are wrapped to for e: its
// terminal's (at most maxHelpWidth), or defaultTermWidth when stdout is not
// a terminal.
func helpWidth(e *env) int {
	if e.term == nil {
		return defaultTermWidth
	}
	return min(e.term.width(), maxHelpWidth)
}

// wrapText is text with each line longer than width cells broken at
// blanks (wrapLine); lines that fit are left as they are.
func wrapText(text string, width int) string {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = wrapLine(l, width)
	}
	return strings.Join(lines, "\n")
}

// wrapLine breaks line at blanks into lines of at most width cells, each
// continuation indented to hangingIndent's column.
func wrapLine(line string, width int) string {
	return wrapLineAt(line, width, hangingIndent(line))
}

// wrapLineAt is wrapLine with continuations indented indent cells. A word
// wider than a line is left whole, past the width.
func wrapLineAt(line string, width, indent int) string {
	if termtext.Cells(line) <= width {
		return line
	}
	if indent > width/2 {
		indent = leadingBlanks(line) + 4 // a column too far right for the text under it
	}
	lead := strings.Repeat(" ", indent)
	var b strings.Builder
	cur := line[:leadingBlanks(line)]
	curCells := termtext.Cells(cur)
	start := true // cur has no word of its own yet
	for _, w := range splitKeepingRuns(line[leadingBlanks(line):]) {
		gap := w.gap
		if start {
			gap = ""
		}
		if !start && curCells+termtext.Cells(gap)+termtext.Cells(w.text) > width {
			b.WriteString(strings.TrimRight(cur, " ") + "\n")
			cur, curCells, gap = lead, indent, ""
		}
		cur += gap + w.text
		curCells += termtext.Cells(gap) + termtext.Cells(w.text)
		start = false
	}
	b.WriteString(cur)
	return b.String()
}

// word is a word of a line with the blanks before it (gap), as typed.
type word struct{ text, gap string }

// splitKeepingRuns splits s into its words, each with the run of blanks
// before it, so that two blanks between table cells stay two.
func splitKeepingRuns(s string) []word {
	var out []word
	gap := ""
	for len(s) > 0 {
		i := strings.IndexFunc(s, func(r rune) bool { return r != ' ' })
		if i < 0 {
			break
		}
		gap, s = s[:i], s[i:]
		j := strings.IndexByte(s, ' ')
		if j < 0 {
			j = len(s)
		}
		out = append(out, word{text: s[:j], gap: gap})
		s = s[j:]
	}
	return out
}

// hangingIndent is the column a continuation of line starts at: that of
// the text after its first run of two or more blanks past its indent (a
// table's second column: "  --kind K  jobs of this kind"), or its indent
// when it has none; the text after a list's "- " for a bullet line.
func hangingIndent(line string) int {
	lead := leadingBlanks(line)
	rest := line[lead:]
	if strings.HasPrefix(rest, "- ") {
		return lead + 2
	}
	if i := strings.Index(rest, "  "); i > 0 {
		j := i + strings.IndexFunc(rest[i:], func(r rune) bool { return !unicode.IsSpace(r) })
		if j > i {
			return lead + termtext.Cells(rest[:j])
		}
	}
	return lead
}

// leadingBlanks is the number of blanks line starts with.
func leadingBlanks(line string) int {
	return len(line) - len(strings.TrimLeft(line, " "))
}
