package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/axqua/jobstore/cmd/jobstore/internal/termtext"
	"github.com/stretchr/testify/require"
)

// At every width the fitted table stays within it, and a job's progress
// stays in view as long as a shortened ID, the state and the progress fit
// at all; columns go before the ID is shortened, and the ID before the
// state is cut.
func TestFitTable_KeepsStateAndProgressAtEveryWidth(t *testing.T) {
	rows := [][tableCols]string{
		{"20261201T150605.954381Z-rjdf9aa42t", "render", "running, cancel requested", "50%", "2026-12-01T15:06:06Z", "3m05s"},
		{"20261201T150605.958335Z-rep17fx6nv", "render", "queued", "-", "2026-12-01T15:06:06Z", "3m04s"},
		{"short", "a-kind-with-a-long-name", "succeeded", "100%", "2026-12-01T15:06:07Z", "2m"},
	}
	for budget := 0; budget <= 120; budget++ {
		t.Run(fmt.Sprint(budget), func(t *testing.T) {
			lines := fitTable(rows, budget)
			require.Len(t, lines, len(rows)+1)
			for _, l := range lines {
				if budget >= 10+2+9+2+8 { // a shortened ID, "succeeded", "PROGRESS"
					require.LessOrEqual(t, termtext.Cells(l), budget, "%q", l)
				}
			}
			for i, r := range rows {
				line := lines[i+1]
				if budget >= len(r[colID])+2+len("running, cancel requested")+2+len("PROGRESS") {
					require.True(t, strings.HasPrefix(line, r[colID]+" "), "the whole ID while it fits: %q", line)
				}
				if budget >= 10+2+9+2+8 {
					require.Contains(t, line, r[colProgress], "%q", line)
					require.Regexp(t, `^\S+\s+\S`, line)
				}
				if budget >= 10+2+len("running, cancel requested")+2+8 {
					require.Contains(t, line, r[colState], "%q", line)
				}
			}
		})
	}
	wide := fitTable(rows, 200)
	require.Contains(t, wide[0], "UPDATED", "all columns where they fit")
	require.Contains(t, wide[1], rows[0][colUpdated])
}

// shortenMiddle keeps an ID's start and (a little more of) its end.
func TestShortenMiddle(t *testing.T) {
	id := "20261201T150605.954381Z-rjdf9aa42t"
	for n, want := range map[int]string{
		40: id, 34: id,
		33: "20261201T150605...381Z-rjdf9aa42t",
		14: "20261...9aa42t",
		10: "202...a42t",
		3:  "...",
		2:  "..",
	} {
		got := shortenMiddle(id, n)
		require.Equal(t, want, got, "%d", n)
		require.LessOrEqual(t, termtext.Cells(got), n)
	}
	for _, tc := range []struct {
		id   string
		n    int
		want string
	}{
		{"réalité-rêvée", 9, "réa...vée"},             // é is one cell
		{"日本語のジョブ名前", 9, "日...名前"},                    // a wide character is two, never cut in half
		{"cafe\u0301-cafe\u0301", 7, "ca...fe\u0301"}, // a combining mark none, kept with its letter
		{"cafe\u0301-cafe\u0301", 6, "c...fe\u0301"},
		{"abcdef日\u0301", 5, "a..."}, // a mark whose letter was cut goes too
		{"🚀🚀🚀🚀🚀", 7, "🚀...🚀"},
	} {
		got := shortenMiddle(tc.id, tc.n)
		require.Equal(t, tc.want, got, "%q in %d cells", tc.id, tc.n)
		require.LessOrEqual(t, termtext.Cells(got), tc.n)
	}
}
