package main

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/internal/testdir"
	"github.com/stretchr/testify/require"
)

// playScreen plays what a terminal of cols columns was sent: text, '\r',
// '\n' and the sequences list --watch uses (ESC [ n A: up n rows; ESC [ K:
// clear to the end of the row; ESC [ J: clear to the end of the screen).
// It returns the rows on screen at the end, and fails the test if anything
// is written in the last column (where a line may wrap) or an unknown
// sequence comes.
func playScreen(t *testing.T, s string, cols int) []string {
	t.Helper()
	var rows [][]rune
	r, c := 0, 0
	row := func() *[]rune {
		for len(rows) <= r {
			rows = append(rows, nil)
		}
		return &rows[r]
	}
	csi := regexp.MustCompile(`^\x1b\[(\d*)([A-Za-z])`)
	for i := 0; i < len(s); {
		switch s[i] {
		case '\r':
			c, i = 0, i+1
		case '\n':
			r, i = r+1, i+1
		case 0x1b:
			m := csi.FindStringSubmatch(s[i:])
			require.NotNil(t, m, "unknown escape at %q", s[i:min(i+10, len(s))])
			n := 1
			if m[1] != "" {
				n, _ = strconv.Atoi(m[1])
			}
			switch m[2] {
			case "A":
				r = max(r-n, 0)
			case "K":
				if p := row(); len(*p) > c {
					*p = (*p)[:c]
				}
			case "J":
				if p := row(); len(*p) > c {
					*p = (*p)[:c]
				}
				rows = rows[:r+1]
			default:
				t.Fatalf("unexpected sequence %q", m[0])
			}
			i += len(m[0])
		default:
			ch, size := utf8.DecodeRuneInString(s[i:])
			require.Less(t, c, cols-1, "a character written in the last column of row %d: %q", r, string(*row())+string(ch))
			p := row()
			for len(*p) < c {
				*p = append(*p, ' ')
			}
			if c < len(*p) {
				(*p)[c] = ch
			} else {
				*p = append(*p, ch)
			}
			c, i = c+1, i+size
		}
	}
	out := make([]string, len(rows))
	for i, rw := range rows {
		out[i] = string(rw)
	}
	return out
}

// list --watch on a terminal: the table is redrawn in place (one table on
// screen, however many changes), a state change and a new job show up in
// it, no line reaches the last column, and SIGINT ends it with exit 0.
func TestListWatch_OnAPseudoTerminalRedrawsTheTableInPlace(t *testing.T) {
	const cols = 40
	root := testdir.New(t)
	a := submit(t, root, "a")
	p := startOnPTY(t, cols, "list", root, "--watch", "--interval", watchPoll.String())
	screen := func() []string { return playScreen(t, p.screen.String(), cols) }
	has := func(re string) func(string) bool {
		rx := regexp.MustCompile(re)
		return func(string) bool {
			for _, row := range screen() {
				if rx.MatchString(row) {
					return true
				}
			}
			return false
		}
	}
	p.waitFor(t, "drawing the queued job", has(`^a\s+render\s+queued\s`))

	run, err := jobstore.Start(a, jobstore.WithProgressInterval(0))
	require.NoError(t, err)
	defer run.Close()
	require.NoError(t, run.Progress(0.5, "halfway"))
	p.waitFor(t, "drawing the job running at 50%", has(`^a\s+render\s+running\s+50%\s`))
	submit(t, root, "b")
	p.waitFor(t, "drawing the new job", has(`^b\s+render\s+queued\s`))

	require.NoError(t, p.cmd.Process.Signal(os.Interrupt))
	require.Equal(t, exitOK, p.wait(t), "screen: %q", p.screen.String())

	rows := screen()
	require.Contains(t, p.screen.String(), "\x1b[", "redrawn with cursor movement")
	var tables, as int
	for _, row := range rows {
		if strings.HasPrefix(row, "ID ") {
			tables++
		}
		if strings.HasPrefix(row, "a ") {
			as++
			require.Regexp(t, `^a\s+render\s+running\s+50%\s`, row, "the row changed in place")
		}
	}
	require.Equal(t, 1, tables, "one table on screen, redrawn in place:\n%s", strings.Join(rows, "\n"))
	require.Equal(t, 1, as, "one row for the job:\n%s", strings.Join(rows, "\n"))
}
