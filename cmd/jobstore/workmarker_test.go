package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/axqua/jobstore/cmd/jobstore/internal/jobview"
	"github.com/axqua/jobstore/internal/testdir"
	"github.com/stretchr/testify/require"
)

// commandOutput is the log at path without the worker's attempt markers:
// what the job's command wrote there.
func commandOutput(t *testing.T, path string) string {
	t.Helper()
	return withoutMarkers(readText(t, path))
}

// withoutMarkers is log without its attempt markers.
func withoutMarkers(log string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(log, "\n") {
		if _, ok := markedAttempt([]byte(strings.TrimSuffix(line, "\n"))); !ok {
			b.WriteString(line)
		}
	}
	return b.String()
}

// The command's progress lines reach report and stay out of stdout.log;
// every other byte reaches it unchanged and in order, however the output
// is split into writes (each byte on its own, or all at once).
func TestProgressWriter_KeepsProgressLinesOutOfTheLog(t *testing.T) {
	long := "progress 0.5 " + strings.Repeat("x", maxProgressLine) + "\n"
	for _, tc := range []struct {
		name, in, out string
		reports       []string
	}{
		{"progress lines only", "progress 0.5 half\nprogress 1\n", "", []string{"0.5 half", "1 "}},
		{"around other lines", "a\nprogress 0.25 q\nb\n", "a\nb\n", []string{"0.25 q"}},
		{"CRLF", "progress 0.5 x\r\nz\r\n", "z\r\n", []string{"0.5 x"}},
		{"last line without newline", "a\nprogress 0.75", "a\n", []string{"0.75 "}},
		{"not progress: kept", "progress 50\nprogressive\nProgress: 0.8\nin progress 0.9\nprogress\n",
			"progress 50\nprogressive\nProgress: 0.8\nin progress 0.9\nprogress\n", nil},
		{"prefix at the end", "a\nprog", "a\nprog", nil},
		{"empty lines", "\n\nprogress 0 z\n\n", "\n\n\n", []string{"0 z"}},
		{"too long to be progress: kept", long, long, nil},
	} {
		for _, split := range []string{"whole", "bytewise"} {
			t.Run(tc.name+"/"+split, func(t *testing.T) {
				var out bytes.Buffer
				var reports []string
				w := &progressWriter{out: &out, report: func(f float64, msg string) {
					reports = append(reports, fmt.Sprint(f)+" "+msg)
				}}
				if split == "whole" {
					_, _ = w.Write([]byte(tc.in))
				} else {
					for i := range len(tc.in) {
						_, _ = w.Write([]byte{tc.in[i]})
					}
				}
				require.NoError(t, w.Close())
				require.Equal(t, tc.out, out.String())
				require.Equal(t, tc.reports, reports)
			})
		}
	}
}

// A job retried after a failed attempt has one part per attempt in each
// log, each opened by its marker (attempt number, time, host); logs shows
// them, and --attempt N prints one attempt's part alone.
func TestWork_EachAttemptIsMarkedInItsLogs(t *testing.T) {
	root := testdir.New(t)
	dir := submitCLI(t, root, "--max-attempts", "2", "--backoff", "100ms")
	w := startWorker(t, "flaky", nil, root)
	st := waitEnded(t, dir)
	require.Len(t, st.Attempts, 2, "%s\n%s", w.stdout.String(), w.stderr.String())
	host, err := os.Hostname()
	require.NoError(t, err)
	marker := func(n int) string {
		return `\[jobstore: attempt ` + fmt.Sprint(n) + ` began \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z on ` + regexp.QuoteMeta(host) + `\]\n`
	}
	r := runCLI(t, "logs", string(dir))
	requireCode(t, r, exitOK)
	require.Regexp(t, `\A`+marker(1)+marker(2)+`second time lucky\n\z`, r.stdout)
	r = runCLI(t, "logs", string(dir), "--stderr")
	requireCode(t, r, exitOK)
	require.Regexp(t, `\A`+marker(1)+`the licence server blinked\n`+marker(2)+`\z`, r.stdout)

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--attempt", "1"}, ""},
		{[]string{"--attempt", "2"}, "second time lucky\n"},
		{[]string{"--attempt", "1", "--stderr"}, "the licence server blinked\n"},
		{[]string{"--attempt", "2", "--stderr"}, ""},
	} {
		r := runCLI(t, append([]string{"logs", string(dir)}, tc.args...)...)
		requireCode(t, r, exitOK)
		require.Equal(t, tc.want, r.stdout, "%v", tc.args)
	}
	r = runCLI(t, "logs", string(dir), "--attempt", "3")
	requireCode(t, r, exitRuntime)
	require.Contains(t, r.stderr, "no part of attempt 3")
	r = runCLI(t, "logs", string(dir), "--attempt", "1", "--follow")
	requireCode(t, r, exitUsage)
}

// A marker always starts a line of its own, even after an attempt whose
// last line had no newline.
func TestCappedLog_MarkStartsALineOfItsOwn(t *testing.T) {
	for _, before := range []string{"", "ends with a newline\n", "no newline at the end"} {
		t.Run(fmt.Sprintf("%q", before), func(t *testing.T) {
			dir := testdir.New(t)
			if before != "" {
				writeFileT(t, filepath.Join(dir, jobview.StdoutFile), before)
			}
			l, err := openLog(fileIn(dir), jobview.StdoutFile, 0)
			require.NoError(t, err)
			t.Cleanup(func() { l.Close() })
			line := attemptLine(2, time.Date(2026, 12, 1, 10, 0, 0, 123456000, time.UTC), "h")
			l.mark(line)
			require.NoError(t, l.Err())
			got := readText(t, filepath.Join(dir, jobview.StdoutFile))
			want := before
			if before != "" && !strings.HasSuffix(before, "\n") {
				want += "\n"
			}
			require.Equal(t, want+string(line), got)
			n, ok := markedAttempt(bytes.TrimSuffix(line, []byte("\n")))
			require.True(t, ok)
			require.EqualValues(t, 2, n)
		})
	}
}
