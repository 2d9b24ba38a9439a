package main

import (
	"strings"
	"testing"

	"github.com/axqua/jobstore/cmd/jobstore/internal/termtext"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// requireFits fails if a line of text is wider than width cells, unless it
// is one word (with its indent) that cannot be broken.
func requireFits(t *testing.T, text string, width int) {
	t.Helper()
	for i, l := range strings.Split(text, "\n") {
		if termtext.Cells(l) > width && strings.Contains(strings.TrimSpace(l), " ") {
			t.Fatalf("line %d is %d cells wide, more than %d:\n%s", i+1, termtext.Cells(l), width, l)
		}
	}
}

// TestHelp_FitsEightyColumnsWhenNotATerminal: every help text, written to
// a pipe, is wrapped to 80 columns, the flags' descriptions included.
func TestHelp_FitsEightyColumnsWhenNotATerminal(t *testing.T) {
	r := runCLI(t, "help")
	requireCode(t, r, exitOK)
	requireFits(t, r.stdout, defaultTermWidth)
	for _, c := range commands() {
		t.Run(c.name, func(t *testing.T) {
			r := runCLI(t, "help", c.name)
			requireCode(t, r, exitOK)
			requireFits(t, r.stdout, defaultTermWidth)
			r = runCLI(t, c.name, "--help")
			requireCode(t, r, exitOK)
			requireFits(t, r.stdout, defaultTermWidth)
		})
	}
}

// maxHelpLines is the most lines a command's help may take at
// defaultTermWidth: the short form a new user reads first, the details
// being in docs/cli.md.
const maxHelpLines = 60

// TestHelp_AtMostSixtyLinesAtEightyColumns: every command's help, as
// written to a pipe (80 columns), flags included, is at most maxHelpLines
// lines.
func TestHelp_AtMostSixtyLinesAtEightyColumns(t *testing.T) {
	for _, c := range commands() {
		t.Run(c.name, func(t *testing.T) {
			r := runCLI(t, "help", c.name)
			requireCode(t, r, exitOK)
			lines := strings.Count(r.stdout, "\n")
			require.LessOrEqual(t, lines, maxHelpLines, "jobstore help %s is %d lines at %d columns:\n%s", c.name, lines, defaultTermWidth, r.stdout)
		})
	}
}

// TestHelp_FitsTheTerminalsWidth: on a terminal, the help is wrapped to
// its width, up to maxHelpWidth; every word of it is kept.
func TestHelp_FitsTheTerminalsWidth(t *testing.T) {
	for _, c := range []struct {
		cols, want int
	}{
		{50, 50},
		{80, 80},
		{200, maxHelpWidth},
	} {
		e := &env{term: &terminal{size: func() (int, int) { return c.cols, 24 }}}
		require.Equal(t, c.want, helpWidth(e))
		for _, cmd := range commands() {
			text := cmd.usage(helpWidth(e))
			requireFits(t, text, c.want)
			assert.Equal(t, strings.Fields(cmd.usage(1<<20)), strings.Fields(text), "%s at %d columns: the words, in order", cmd.name, c.cols)
		}
		requireFits(t, usageText(helpWidth(e)), c.want)
	}
}

func TestWrapLine_BreaksUnderTheTextItContinues(t *testing.T) {
	for _, c := range []struct {
		name, line string
		width      int
		want       string
	}{
		{"fits", "  --json  print JSON", 20, "  --json  print JSON"},
		{"prose", "one two three four five", 10, "one two\nthree four\nfive"},
		{"a flag's description", "  --kind K  jobs of this kind, any", 24, "  --kind K  jobs of this\n            kind, any"},
		{"a bullet", "- one two three four", 12, "- one two\n  three four"},
		{"a word wider than the line", "see https://example.com/a/long/path now", 12, "see\nhttps://example.com/a/long/path\nnow"},
		{"a column too far right", "  a-very-long-flag-name  its text goes here", 30, "  a-very-long-flag-name  its\n      text goes here"},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, wrapLine(c.line, c.width))
		})
	}
}
