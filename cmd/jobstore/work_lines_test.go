package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/jobview"
	"github.com/axqua/jobstore/internal/testdir"
	"github.com/stretchr/testify/require"
)

// --until-empty exits 0 only when every job it ran succeeded; 1 when one
// failed (each end line says which).
func TestWork_UntilEmptyExitCodeSaysWhetherAllSucceeded(t *testing.T) {
	for _, tc := range []struct {
		name   string
		params []string // one job each
		want   int
	}{
		{"nothing queued", nil, exitOK},
		{"all succeeded", []string{"", `{"exit": 0}`}, exitOK},
		{"one failed", []string{"", `{"exit": 3}`, ""}, exitUnsuccessful},
		{"all failed", []string{`{"exit": 1}`, `{"exit": 4}`}, exitUnsuccessful},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := testdir.New(t)
			for i, p := range tc.params {
				submitKind(t, root, fmt.Sprintf("j%d", i), "k", p)
			}
			r := runWorker(t, "echo", nil, root, "--until-empty")
			requireCode(t, r, tc.want)
			require.Equal(t, 2*len(tc.params), strings.Count(r.stdout, "\n"), "a start and an end line per job")
		})
	}
}

// A line that looks meant as a progress line but is not one is said once
// per job, in the job's stderr.log and on the worker's stderr, with the
// form expected; the valid lines around it still count.
func TestWork_UnparsedProgressLineIsReportedOncePerJob(t *testing.T) {
	for _, tc := range []struct {
		name   string
		print  string
		noted  string // the line the note quotes; "": no note
		wanted float64
	}{
		{"fraction out of range", "progress 50 halfway\nprogress 0.5 ok\nprogress 60 more\n", `"progress 50 halfway"`, 0.5},
		{"colon and capital", "Progress: 0.8\nprogress 0.25 ok\n", `"Progress: 0.8"`, 0.25},
		{"percent after equals", "progress=50%\nprogress 0.75\n", `"progress=50%"`, 0.75},
		{"no number", "progress\nprogress 1\n", `"progress"`, 1},
		{"valid lines only", "progress 0.5 a\nprogress 1 b\n", "", 1},
		{"other words are not meant as progress", "progressive rock\nin progress 0.9\nprogress 0.5\n", "", 0.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := testdir.New(t)
			params, err := json.Marshal(map[string]string{"print": tc.print})
			require.NoError(t, err)
			a := submitKind(t, root, "a", "k", string(params))
			b := submitKind(t, root, "b", "k", string(params))
			r := runWorker(t, "echo", nil, root, "--until-empty")
			requireCode(t, r, exitOK)
			for _, dir := range []jobstore.JobDir{a, b} {
				st := status(t, dir)
				require.NotNil(t, st.Progress)
				require.Equal(t, tc.wanted, *st.Progress)
				log := readText(t, filepath.Join(string(dir), jobview.StderrFile))
				var kept strings.Builder // the lines that are not progress lines
				for _, l := range strings.SplitAfter(tc.print, "\n") {
					if _, _, ok := parseProgress(strings.TrimSuffix(l, "\n")); !ok {
						kept.WriteString(l)
					}
				}
				require.Contains(t, commandOutput(t, filepath.Join(string(dir), jobview.StdoutFile)), kept.String(), "the lines are kept, progress lines left out")
				if tc.noted == "" {
					require.NotContains(t, log, "[jobstore: the output line")
					continue
				}
				require.Equal(t, 1, strings.Count(log, "[jobstore: the output line"), log)
				require.Contains(t, log, "[jobstore: the output line "+tc.noted+" was not taken as progress: the form is \"progress FRACTION [MESSAGE]\"")
			}
			if tc.noted == "" {
				require.Empty(t, r.stderr)
				return
			}
			require.Equal(t, 1, strings.Count(r.stderr, "job a: the output line "+tc.noted), r.stderr)
			require.Equal(t, 1, strings.Count(r.stderr, "job b: the output line "+tc.noted), r.stderr)
			require.Equal(t, 2, strings.Count(r.stderr, "\n"), r.stderr)
		})
	}
}

// A kind or a progress message that holds terminal controls or invalid
// UTF-8 reaches the worker's start and end lines escaped; --json carries
// them exactly.
func TestWork_LinesEscapeTerminalControls(t *testing.T) {
	const kind = "k\x1b[2J\x1b]0;title\x07"
	const message = "done \x1b[31mred\u009b \xff"
	root := testdir.New(t)
	params, err := json.Marshal(map[string][]byte{"raw": []byte("progress 1 " + message + "\n")})
	require.NoError(t, err)
	dir, err := jobstore.Submit(root, jobstore.JobSpec{ID: "j", Kind: kind, Params: params})
	require.NoError(t, err)

	r := runWorker(t, "echo", nil, root, "--until-empty")
	requireCode(t, r, exitOK)
	require.Contains(t, r.stdout, ` start j kind k\x1b[2J\x1b]0;title\a`+"\n")
	require.Contains(t, r.stdout, ` succeeded exit 0 after `)
	require.Contains(t, r.stdout, `: done \x1b[31mred\u009b \xff`+"\n")
	for _, raw := range []string{"\x1b", "\x07", "\u009b", "\xff"} {
		require.NotContains(t, r.stdout, raw)
	}
	require.Contains(t, status(t, dir).Message, "done \x1b[31mred\u009b ", "the record keeps what the command wrote")

	// --json: the exact strings (a job run again would be refused: submit anew).
	dir2, err := jobstore.Submit(root, jobstore.JobSpec{ID: "j2", Kind: kind, Params: params})
	require.NoError(t, err)
	r = runWorker(t, "echo", nil, root, "--until-empty", "--json")
	requireCode(t, r, exitOK)
	lines := jsonLines(t, r.stdout)
	require.Len(t, lines, 2)
	require.Equal(t, kind, lines[0]["kind"])
	require.Equal(t, status(t, dir2).Message, lines[1]["message"])
}

// --log-limit keeps the last part of a large output in stdout.log and
// stderr.log, under the limit, behind a first line that says how much of
// the start was dropped.
func TestWork_LogLimitKeepsTheLastPart(t *testing.T) {
	const lines = 20000 // about 600 KiB each on stdout and stderr
	for _, tc := range []struct {
		name  string
		limit int64 // 0: the default
	}{
		{"small limit", 16 << 10},
		{"smallest limit", minLogLimit},
		{"default limit keeps it all", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := testdir.New(t)
			dir := submitKind(t, root, "j", "k", fmt.Sprintf(`{"bulk": %d}`, lines))
			args := []string{root, "--until-empty"}
			if tc.limit != 0 {
				args = append(args, "--log-limit", fmt.Sprint(tc.limit))
			}
			r := runWorker(t, "echo", nil, args...)
			requireCode(t, r, exitOK)
			var bulk strings.Builder
			for i := range lines {
				bulk.WriteString(bulkLine(i))
			}
			abs, err := filepath.Abs(string(dir))
			require.NoError(t, err)
			st := status(t, dir)
			marker := string(attemptLine(st.Attempt, *st.StartedAt, st.Host))
			for _, f := range []struct{ name, whole string }{
				{jobview.StdoutFile, marker + fmt.Sprintf("id=j dir=%s params=%s\n", abs, fmt.Sprintf(`{"bulk":%d}`, lines)) + bulk.String()},
				{jobview.StderrFile, marker + "a line on stderr\n" + bulk.String()},
			} {
				got := readText(t, filepath.Join(string(dir), f.name))
				if tc.limit == 0 {
					require.Equal(t, f.whole, got)
					continue
				}
				requireCut(t, got, f.whole, tc.limit)
			}
		})
	}
}

// requireCut checks that kept is whole cut as cappedLog cuts: at most
// limit bytes, the cut note, then the end of whole, the dropped count
// right.
func requireCut(t *testing.T, kept, whole string, limit int64) {
	t.Helper()
	require.LessOrEqual(t, int64(len(kept)), limit)
	note, rest, ok := strings.Cut(kept, "\n")
	require.True(t, ok)
	var dropped, under int64
	_, err := fmt.Sscanf(note+"\n", cutNote, &dropped, &under)
	require.NoError(t, err, "first line %q", note)
	require.Equal(t, limit, under)
	require.Equal(t, int64(len(whole)), dropped+int64(len(rest)), "dropped and kept make the whole")
	require.Equal(t, whole[dropped:], rest, "the last part is kept")
	require.GreaterOrEqual(t, int64(len(rest)), (limit-maxCutNote)/2, "at least half is kept")
}

// cappedLog, against a reference (everything written): after any run of
// writes of any size, the file is everything written when it fits, else
// the cut note and the last part of it. A file that was cut before (by
// another worker) adds to its count.
func TestCappedLog_KeepsTheLastPart(t *testing.T) {
	const limit = minLogLimit
	for _, tc := range []struct {
		name   string
		sizes  []int
		before string // in the file before it is opened
	}{
		{"fits", []int{10, 100, 1000}, ""},
		{"exactly the limit", []int{limit}, ""},
		{"one byte over", []int{limit, 1}, ""},
		{"small writes", repeat(7, 3000), ""},
		{"writes of half the limit", repeat(limit/2, 9), ""},
		{"one write larger than the limit", []int{3 * limit}, ""},
		{"mixed", []int{1, 5000, 3, 2047, 2049, 40000, 1}, ""},
		{"appends to earlier output", []int{3000, 3000}, "earlier attempt\n"},
		{"adds to an earlier cut", []int{3000, 3000}, fmt.Sprintf(cutNote, 1234, 9999) + "earlier\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := testdir.New(t)
			path := filepath.Join(dir, jobview.StdoutFile)
			earlierDropped := int64(0)
			whole := tc.before // what was written, less an earlier cut note
			uncut := tc.before // the file if nothing is cut
			if tc.before != "" {
				writeFileT(t, path, tc.before)
				if strings.HasPrefix(tc.before, "[jobstore:") {
					earlierDropped = 1234
					_, whole, _ = strings.Cut(tc.before, "\n")
				}
			}
			l, err := openLog(fileIn(dir), jobview.StdoutFile, limit)
			require.NoError(t, err)
			t.Cleanup(func() { l.Close() })
			for i, n := range tc.sizes {
				p := make([]byte, n)
				for j := range p {
					p[j] = byte('a' + (i+j)%26)
				}
				written, err := l.Write(p)
				require.NoError(t, err)
				require.Equal(t, n, written)
				whole += string(p)
				uncut += string(p)
				require.NoError(t, l.Err())
				got := readText(t, path)
				if len(uncut) <= limit {
					require.Equal(t, uncut, got)
					continue
				}
				note, rest, _ := strings.Cut(got, "\n")
				var dropped, under int64
				_, err = fmt.Sscanf(note+"\n", cutNote, &dropped, &under)
				require.NoError(t, err, "first line %q", note)
				require.Equal(t, int64(limit), under)
				require.Equal(t, int64(len(whole))+earlierDropped, dropped+int64(len(rest)))
				require.True(t, strings.HasSuffix(whole, rest), "the last part is kept")
				require.LessOrEqual(t, len(got), limit, "after the cut")
			}
		})
	}
}

func repeat(n, times int) []int {
	s := make([]int, times)
	for i := range s {
		s[i] = n
	}
	return s
}

// A file that cannot be written (closed under it) is said in Err, with
// its name; writes still report success, so the command never blocks.
func TestCappedLog_ErrorIsKeptNotReturned(t *testing.T) {
	dir := testdir.New(t)
	l, err := openLog(fileIn(dir), jobview.StderrFile, minLogLimit)
	require.NoError(t, err)
	require.NoError(t, l.f.Close())
	n, err := l.Write([]byte("lost"))
	require.NoError(t, err)
	require.Equal(t, 4, n)
	require.ErrorIs(t, l.Err(), os.ErrClosed)
	require.Contains(t, l.Err().Error(), jobview.StderrFile)
}

func TestSizeFlag(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		str  string
		bad  bool
	}{
		{in: "0", want: 0, str: "0"},
		{in: "4096", want: 4096, str: "4KiB"},
		{in: "5000", want: 5000, str: "5000"},
		{in: "16KiB", want: 16 << 10, str: "16KiB"},
		{in: "64MiB", want: 64 << 20, str: "64MiB"},
		{in: "2GiB", want: 2 << 30, str: "2GiB"},
		{in: "1024MiB", want: 1 << 30, str: "1GiB"},
		{in: "12MB", bad: true},
		{in: "MiB", bad: true},
		{in: "-1KiB", bad: true},
		{in: "9999999999GiB", bad: true},
		{in: "", bad: true},
	} {
		t.Run(tc.in, func(t *testing.T) {
			var s sizeFlag
			err := s.Set(tc.in)
			if tc.bad {
				require.ErrorContains(t, err, "is not a size")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, int64(s))
			require.Equal(t, tc.str, s.String())
		})
	}
}

// A cut stopped at any step (the worker killed midway) leaves a file that
// still ends with everything the cut keeps, and more: the last part is
// never lost.
func TestCappedLog_CutStoppedMidwayKeepsTheLastPart(t *testing.T) {
	const limit = 1 << 20 // a cut copies (limit-maxCutNote)/2 bytes, in several cutBuffer steps
	keep := (limit - maxCutNote) / 2
	steps := (keep+cutBuffer-1)/cutBuffer + 2 // the copies, the note, the truncation
	require.Greater(t, steps, 4, "a cut of several copies")
	errKilled := errors.New("killed")
	for stopAt := range steps {
		t.Run(fmt.Sprintf("stopped before step %d of %d", stopAt+1, steps), func(t *testing.T) {
			dir := testdir.New(t)
			l, err := openLog(fileIn(dir), jobview.StdoutFile, limit)
			require.NoError(t, err)
			t.Cleanup(func() { l.Close() })
			n := 0
			l.cutStep = func() error {
				n++
				if n > stopAt {
					return errKilled
				}
				return nil
			}
			var whole strings.Builder
			for i := 0; whole.Len() <= limit; i++ {
				line := bulkLine(i)
				whole.WriteString(line)
				_, err := l.Write([]byte(line))
				require.NoError(t, err)
			}
			require.ErrorIs(t, l.Err(), errKilled, "the cut was stopped")
			got := readText(t, filepath.Join(dir, jobview.StdoutFile))
			w := whole.String()
			require.True(t, strings.HasSuffix(got, w[len(w)-keep:]), "the last %d bytes are at the end of the file", keep)
			require.GreaterOrEqual(t, len(got), keep)
		})
	}
}

// fileIn opens a file of dir by name for reading and writing, creating it,
// as a Run's OpenFile does in its job directory.
func fileIn(dir string) func(name string) (*os.File, error) {
	return func(name string) (*os.File, error) {
		return os.OpenFile(filepath.Join(dir, name), os.O_RDWR|os.O_CREATE, 0o644)
	}
}
