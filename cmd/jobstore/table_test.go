package main

import (
	"fmt"
	"strings"
	"testing"
	"text/tabwriter"

	"github.com/stretchr/testify/require"
)

// For ASCII text the table printer writes what text/tabwriter (minwidth 0,
// padding 2, blanks) writes for the same lines.
func TestTableWriter_MatchesTabwriterOnASCII(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lines []string
	}{
		{"check", []string{"ok\tjob-1\tqueued, seq 1", "FAIL\ta-longer-id\tcorrupt", "ok\tj\t"}},
		{"show", []string{"id\tj", "submitted_by\tme", "state\trunning"}},
		{"help", []string{"  --json\tprint JSON", "  --interval duration\tthe safety poll (default 1s)"}},
		{"one cell", []string{"alone"}},
		{"no newline at the end", []string{"a\tb", "ccc\td"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := strings.Join(tc.lines, "\n")
			if tc.name != "no newline at the end" {
				text += "\n"
			}
			var want, got strings.Builder
			tw := tabwriter.NewWriter(&want, 0, 8, 2, ' ', 0)
			fmt.Fprint(tw, text)
			require.NoError(t, tw.Flush())
			ours := newTableWriter(&got)
			fmt.Fprint(ours, text)
			require.NoError(t, ours.Flush())
			require.Equal(t, want.String(), got.String())
		})
	}
}

// Where text/tabwriter counts runes, the table printer counts the cells a
// terminal draws: a wide ID and one with a combining mark still line up.
func TestTableWriter_AlignsWideAndCombiningCells(t *testing.T) {
	var got strings.Builder
	tw := newTableWriter(&got)
	fmt.Fprint(tw, "ok\t日本語\tqueued\nFAIL\tcafe\u0301\tcorrupt\nok\t🚀\tdone\n")
	require.NoError(t, tw.Flush())
	require.Equal(t, "ok    日本語  queued\nFAIL  cafe\u0301    corrupt\nok    🚀      done\n", got.String())
}
