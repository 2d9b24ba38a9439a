package main

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/clitest"
	"github.com/axqua/jobstore/cmd/jobstore/internal/termtext"
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
// it, no line reaches the last column, and SIGINT (Ctrl-C) ends it: the
// table drawn a last time, its last line saying it stopped.
func TestListWatch_OnAPseudoTerminalRedrawsTheTableInPlace(t *testing.T) {
	const cols = 40
	root := testdir.New(t)
	a := clitest.Submit(t, root, "a")
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
	clitest.Submit(t, root, "b")
	p.waitFor(t, "drawing the new job", has(`^b\s+render\s+queued\s`))

	require.NoError(t, p.cmd.Process.Signal(os.Interrupt))
	p.wait(t)
	requireEndedBy(t, p.cmd, syscall.SIGINT)

	rows := screen()
	for len(rows) > 0 && rows[len(rows)-1] == "" {
		rows = rows[:len(rows)-1]
	}
	require.NotEmpty(t, rows)
	require.Equal(t, termtext.FitCells("stopped (SIGINT) watching "+root, cols-1), rows[len(rows)-1], "screen:\n%s", strings.Join(rows, "\n"))
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

// list --watch on a terminal of 40 columns, with generated job IDs (34
// characters): every job's row shows its state and its progress, the ID
// shortened in its middle (its start and its end kept), and no row is an ID
// cut short and nothing else.
func TestListWatch_OnANarrowTerminalShowsStateAndProgress(t *testing.T) {
	const cols = 40
	root := testdir.New(t)
	var ids []string
	for _, o := range []jobstore.State{jobstore.Queued, jobstore.Running, jobstore.Succeeded} {
		dir, err := jobstore.Submit(root, jobstore.JobSpec{Kind: "render"})
		require.NoError(t, err)
		ids = append(ids, dir.ID())
		if o == jobstore.Queued {
			continue
		}
		run, err := jobstore.Start(dir, jobstore.WithProgressInterval(0))
		require.NoError(t, err)
		t.Cleanup(func() { _ = run.Close() })
		require.NoError(t, run.Progress(0.5, "halfway"))
		if o == jobstore.Succeeded {
			require.NoError(t, run.Progress(1, "all"))
			require.NoError(t, run.Finish(jobstore.Outcome{State: jobstore.Succeeded}))
		}
	}
	require.Greater(t, len(ids[0]), cols/2, "IDs long enough to crowd out the rest")

	p := startOnPTY(t, cols, "list", root, "--watch", "--interval", watchPoll.String())
	want := map[string]*regexp.Regexp{
		ids[0]: regexp.MustCompile(`^(\S+)\s+queued\s+-(\s|$)`),
		ids[1]: regexp.MustCompile(`^(\S+)\s+running\s+50%(\s|$)`),
		ids[2]: regexp.MustCompile(`^(\S+)\s+succeeded\s+100%(\s|$)`),
	}
	rowOf := func(id string, rows []string) string {
		for _, row := range rows {
			if m := want[id].FindStringSubmatch(row); m != nil && shortened(m[1], id) {
				return row
			}
		}
		return ""
	}
	p.waitFor(t, "every job's state and progress", func(s string) bool {
		rows := playScreen(t, s, cols)
		for _, id := range ids {
			if rowOf(id, rows) == "" {
				return false
			}
		}
		return true
	})
	rows := playScreen(t, p.screen.String(), cols)
	for _, row := range rows {
		require.NotRegexp(t, `^\S+\.\.\.$`, row, "an ID cut short and nothing else:\n%s", strings.Join(rows, "\n"))
	}
	require.NoError(t, p.cmd.Process.Signal(os.Interrupt))
	p.wait(t)
	requireEndedBy(t, p.cmd, syscall.SIGINT)
}

// shortened: short is id, or id with its middle replaced by "..." (its
// start and its end kept, a few characters of each at least).
func shortened(short, id string) bool {
	if short == id {
		return true
	}
	head, tail, ok := strings.Cut(short, "...")
	return ok && len(head) >= 3 && len(tail) >= 3 && strings.HasPrefix(id, head) && strings.HasSuffix(id, tail)
}
