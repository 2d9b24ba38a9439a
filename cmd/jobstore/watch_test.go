package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/clitest"
	"github.com/axqua/jobstore/cmd/jobstore/internal/termtext"
	"github.com/axqua/jobstore/internal/testdir"
	"github.com/stretchr/testify/require"
)

// Timing of the watch tests: the binary polls every watchPoll; a line it
// should print must come within lineTimeout (generous: the machine is shared).
const (
	watchPoll   = 20 * time.Millisecond
	lineTimeout = 30 * time.Second
)

// watchProc is a running "jobstore watch" (or list --watch) whose output is
// read line by line.
type watchProc struct {
	cmd    *exec.Cmd
	lines  chan string
	stderr bytes.Buffer
	seen   []string
	cancel context.CancelFunc
}

// startWatch starts "jobstore watch DIR" with flags (default: a safety
// poll of watchPoll).
func startWatch(t *testing.T, dir jobstore.JobDir, flags ...string) *watchProc {
	t.Helper()
	if len(flags) == 0 {
		flags = []string{"--interval", watchPoll.String()}
	}
	return startLines(t, append([]string{"watch", string(dir)}, flags...)...)
}

// startLines starts the binary with args, its output read line by line.
func startLines(t *testing.T, args ...string) *watchProc {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cliTimeout)
	w := &watchProc{lines: make(chan string, 1000), cancel: cancel}
	w.cmd = jobstoreCmd(ctx, nil, args...)
	w.cmd.Stderr = &w.stderr
	out, err := w.cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, w.cmd.Start())
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			w.lines <- sc.Text()
		}
		close(w.lines)
	}()
	t.Cleanup(func() {
		cancel()
		_ = w.cmd.Wait()
	})
	return w
}

// waitLine reads lines until one contains want, and returns it.
func (w *watchProc) waitLine(t *testing.T, want string) string {
	t.Helper()
	deadline := time.After(lineTimeout)
	for {
		select {
		case line, ok := <-w.lines:
			if !ok {
				t.Fatalf("watch ended before printing %q; it printed:\n%s\nstderr: %s", want, strings.Join(w.seen, "\n"), w.stderr.String())
			}
			w.seen = append(w.seen, line)
			if strings.Contains(line, want) {
				return line
			}
		case <-deadline:
			t.Fatalf("no line with %q within %v; watch printed:\n%s", want, lineTimeout, strings.Join(w.seen, "\n"))
		}
	}
}

// wait waits for the watch to end and returns its exit code and last line.
func (w *watchProc) wait(t *testing.T) (code int, last string) {
	t.Helper()
	deadline := time.After(lineTimeout)
	for ended := false; !ended; {
		select {
		case line, ok := <-w.lines:
			if ended = !ok; ok {
				w.seen = append(w.seen, line)
			}
		case <-deadline:
			t.Fatalf("watch did not end within %v; it printed:\n%s", lineTimeout, strings.Join(w.seen, "\n"))
		}
	}
	err := w.cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	require.NotEmpty(t, w.seen)
	return code, w.seen[len(w.seen)-1]
}

// A runner in this process (the library's Start, Progress, Finish) and the
// binary watching it: the watch follows the progress and ends when the
// runner finishes, with 0 for succeeded and 1 for the other endings.
func TestWatch_EndsWhenAConcurrentRunnerFinishes(t *testing.T) {
	for _, tc := range []struct {
		name     string
		end      func(t *testing.T, run *jobstore.Run)
		wantCode int
		wantLast []string
	}{
		{"succeeded", func(t *testing.T, run *jobstore.Run) {
			require.NoError(t, run.Finish(jobstore.Outcome{State: jobstore.Succeeded, Message: "all frames", ExitCode: intPtr(0)}))
		}, exitOK, []string{"succeeded", "(exit code 0)", "all frames"}},
		{"failed", func(t *testing.T, run *jobstore.Run) {
			require.NoError(t, run.Finish(jobstore.Outcome{State: jobstore.Failed, ExitCode: intPtr(2),
				Error: "frame 15: disk full", Remedy: "free some space"}))
		}, exitUnsuccessful, []string{"failed", "(exit code 2)", "frame 15: disk full", "Remedy: free some space"}},
		{"cancelled", func(t *testing.T, run *jobstore.Run) {
			require.NoError(t, run.Finish(jobstore.Outcome{State: jobstore.Cancelled, Message: "cancelled by the user"}))
		}, exitUnsuccessful, []string{"cancelled", "cancelled by the user"}},
		{"lost", func(t *testing.T, run *jobstore.Run) {
			// The runner goes away without finishing; a reaper notices.
			require.NoError(t, run.Close())
			changed, err := jobstore.Reconcile(run.Dir())
			require.NoError(t, err)
			require.True(t, changed)
		}, exitUnsuccessful, []string{"lost", "Remedy: "}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := clitest.Submit(t, testdir.New(t), "j")
			w := startWatch(t, dir)
			w.waitLine(t, "queued")

			run, err := jobstore.Start(dir)
			require.NoError(t, err)
			defer run.Close()
			require.NoError(t, run.Progress(0.5, "halfway there"))
			line := w.waitLine(t, "halfway there")
			require.Contains(t, line, "running")
			require.Contains(t, line, "50%")
			require.Contains(t, line, "[##########----------]")

			tc.end(t, run)
			code, last := w.wait(t)
			require.Equal(t, tc.wantCode, code, "watch printed:\n%s", strings.Join(w.seen, "\n"))
			require.True(t, strings.HasPrefix(last, "job j "+tc.name), last)
			for _, want := range tc.wantLast {
				require.Contains(t, last, want)
			}
			require.Empty(t, w.stderr.String())
		})
	}
}

// A status.json that is missing when the watch starts, or torn (by a writer
// that does not use the atomic protocol) or removed while watched, does not
// end the watch: it says so and goes on, and still ends with the job.
func TestWatch_KeepsWatchingThroughAnUnreadableOrMissingStatus(t *testing.T) {
	dir := clitest.Submit(t, testdir.New(t), "j")
	require.NoError(t, os.Remove(dir.StatusPath()))
	w := startWatch(t, dir)
	w.waitLine(t, "no status.json yet")

	require.NoError(t, os.WriteFile(dir.StatusPath(), []byte(`{"schema_version": 1, "state": "runn`), 0o644))
	note := w.waitLine(t, "unreadable for now")
	require.Contains(t, note, "still watching")

	// Removed while watched: nothing newer to show, and the watch goes on.
	removeWhileWatched(t, dir.StatusPath())

	require.NoError(t, jobstore.WriteStatus(dir, jobstore.JobStatus{State: jobstore.Succeeded, Seq: 9}))
	code, last := w.wait(t)
	require.Equal(t, exitOK, code)
	require.Equal(t, "job j succeeded", last)
}

// A cancel request made by another process (the cancel command, or the
// library's RequestCancel) is shown as soon as it exists, while the runner
// is still running and writes nothing: no status change brings it. Then
// the runner, told by its Context, ends the job cancelled: exit 1.
func TestWatch_ShowsACancelRequestAsSoonAsItExists(t *testing.T) {
	for _, tc := range []struct {
		name    string
		json    bool
		request func(t *testing.T, dir jobstore.JobDir)
	}{
		{"jobstore cancel", false, func(t *testing.T, dir jobstore.JobDir) {
			requireCode(t, runCLI(t, "cancel", string(dir), "--by", "alice", "--reason", "wrong input"), exitOK)
		}},
		{"RequestCancel, json", true, func(t *testing.T, dir jobstore.JobDir) {
			require.NoError(t, jobstore.RequestCancel(dir, jobstore.CancelRequest{
				RequestedAt: jobstore.Now(), RequestedBy: "alice", Reason: "wrong input"}))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := clitest.Submit(t, testdir.New(t), "j")
			run, err := jobstore.Start(dir)
			require.NoError(t, err)
			defer run.Close()
			require.NoError(t, run.Progress(0.3, "working"))
			require.NoError(t, run.Flush())
			flags := []string{"--interval", watchPoll.String()}
			if tc.json {
				flags = append(flags, "--json")
			}
			w := startWatch(t, dir, flags...)
			w.waitLine(t, "working")

			tc.request(t, dir)
			line := w.waitLine(t, "cancel requested")
			if tc.json {
				var ev watchEventJSON
				require.NoError(t, json.Unmarshal([]byte(line), &ev), line)
				require.Equal(t, "cancel", ev.Event)
				require.Equal(t, jobstore.Running, ev.Status.State, "the last status read")
				require.Nil(t, ev.Error)
				line = ev.Message
			}
			require.True(t, strings.HasPrefix(line, `cancel requested by "alice" at `), line)
			require.Contains(t, line, `reason "wrong input"; waiting for the runner to stop`)
			st, err := jobstore.ReadStatus(dir)
			require.NoError(t, err)
			require.Equal(t, jobstore.Running, st.State, "shown before the runner did anything about it")

			select {
			case <-run.Context().Done():
			case <-time.After(lineTimeout):
				t.Fatal("the runner was not told of the request")
			}
			require.NoError(t, run.Finish(jobstore.Outcome{State: jobstore.Cancelled, Message: "stopped on request"}))
			code, last := w.wait(t)
			require.Equal(t, exitUnsuccessful, code)
			require.Contains(t, last, "cancelled")
			require.Contains(t, last, "stopped on request")
			n := 0
			for _, l := range w.seen {
				n += strings.Count(l, "cancel requested")
			}
			require.Equal(t, 1, n, "the request is shown once:\n%s", strings.Join(w.seen, "\n"))
		})
	}
}

// removeWhileWatched removes a file the watcher may have open this instant:
// on Windows that is a sharing violation until its read ends, so retry.
func removeWhileWatched(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(lineTimeout)
	for {
		err := os.Remove(path)
		if err == nil || runtime.GOOS != "windows" || time.Now().After(deadline) {
			require.NoError(t, err)
			return
		}
		time.Sleep(watchPoll / 4)
	}
}

func TestWatch_NewerSchemaEndsTheWatchWithExitThree(t *testing.T) {
	dir := clitest.Submit(t, testdir.New(t), "j")
	require.NoError(t, os.WriteFile(dir.StatusPath(), []byte(`{"schema_version": 99, "state": "queued"}`), 0o644))
	r := runCLI(t, "watch", string(dir), "--interval", watchPoll.String())
	requireCode(t, r, exitRuntime)
	requireErrorLine(t, r)
	require.Contains(t, r.stderr, "schema_version 99")
}

func TestWatch_FinishedJobEndsAtOnce(t *testing.T) {
	root := testdir.New(t)
	clitest.RunJob(t, root, "done", jobstore.Outcome{State: jobstore.Succeeded})
	clitest.RunJob(t, root, "broke", jobstore.Outcome{State: jobstore.Failed, Error: "boom"})
	requireCode(t, runCLI(t, "watch", filepath.Join(root, "done")), exitOK)
	r := runCLI(t, "watch", filepath.Join(root, "broke"))
	requireCode(t, r, exitUnsuccessful)
	require.Regexp(t, `job broke failed after \S+: boom\n$`, r.stdout)
	require.Empty(t, r.stderr, "a failed job is the answer, not an error of the command")
}

// fixedWidth is a terminal of cols columns, for tests.
func fixedWidth(cols int) *terminal {
	return &terminal{size: func() (int, int) { return cols, defaultTermHeight }}
}

// On a terminal the line is redrawn in place: '\r', the new line, and
// blanks over what is left of a longer previous line; a note gets its own
// line; the end of the watch ends the line.
func TestWatcher_RedrawsOneLineOnATerminal(t *testing.T) {
	var out bytes.Buffer
	w := newWatcher(&out, fixedWidth(80))
	p := 0.25
	long := &jobstore.JobStatus{State: jobstore.Running, Seq: 2, Progress: &p, Message: "a long message here"}
	short := &jobstore.JobStatus{State: jobstore.Running, Seq: 3, Progress: &p, Message: "short"}
	w.draw(long)
	w.draw(short)
	l1, l2 := fitStatusLine(long, 80), fitStatusLine(short, 80)
	require.Equal(t, "running   [#####---------------]  25%  seq 2  a long message here", l1)
	pad := strings.Repeat(" ", len(l1)-len(l2))
	require.Equal(t, "\r"+l1+"\r"+l2+pad, out.String())

	out.Reset()
	w.notef("note %d", 1)
	w.notef("note %d", 1) // not repeated while it holds
	w.draw(short)
	w.endLine()
	require.Equal(t, "\nnote 1\n\r"+l2+"\n", out.String())
}

func TestWatcher_PrintsALinePerChangeWhenNotATerminal(t *testing.T) {
	var out bytes.Buffer
	w := newWatcher(&out, nil)
	p := 0.5
	st := &jobstore.JobStatus{State: jobstore.Running, Seq: 2, Progress: &p, Message: "m"}
	w.draw(st)
	w.draw(st) // same status polled again: no new line
	st2 := *st
	st2.Seq = 3
	w.draw(&st2)
	require.Equal(t, statusLine(st)+"\n"+statusLine(&st2)+"\n", out.String())
	require.NotContains(t, out.String(), "\r")
}

// screenRows splits what a terminal was sent into the rows it shows between
// carriage returns and newlines: each is what one redraw wrote.
func screenRows(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == '\r' || r == '\n' })
}

// However narrow the terminal and however long or wide-charactered the
// message, a redraw (line and blanks) never reaches the last column, so it
// never wraps; and the state and percentage are always kept.
func TestWatcher_LineNeverWrapsAtAnyWidth(t *testing.T) {
	p := 0.4
	messages := []string{"", "frame 12/30", strings.Repeat("x", 300),
		"レンダリング中 " + strings.Repeat("漢字", 40), "tab\there\x1b[31mred\x1b[0m", "émoji 🎬🎬🎬 " + strings.Repeat("é", 80)}
	for _, cols := range []int{1, 5, 10, 20, 30, 50, 79, 80, 120, 300} {
		t.Run(fmt.Sprint(cols), func(t *testing.T) {
			var out bytes.Buffer
			w := newWatcher(&out, fixedWidth(cols))
			for i, msg := range messages {
				w.draw(&jobstore.JobStatus{State: jobstore.Running, Seq: uint64(i + 1), Progress: &p, Message: msg})
			}
			for _, row := range screenRows(out.String()) {
				require.Less(t, termtext.Cells(row), cols, "row %q is %d cells on a %d-column terminal", row, termtext.Cells(row), cols)
				require.NotContains(t, row, "\x1b", "control characters reach the terminal")
				require.NotContains(t, row, "\t")
				if cols >= 20 {
					require.True(t, strings.HasPrefix(row, "running") && strings.Contains(row, "40%"), "row %q", row)
				}
			}
		})
	}
}

// What a narrow terminal keeps: the bar gives way before the message does.
func TestFitStatusLine_ShedsTheBarBeforeTheMessage(t *testing.T) {
	p := 0.4
	st := &jobstore.JobStatus{State: jobstore.Running, Seq: 14, Progress: &p, Message: "frame 12/30"}
	for _, tc := range []struct {
		cols int
		want string
	}{
		{80, "running   [########------------]  40%  seq 14  frame 12/30"},
		{50, "running   [####------]  40%  seq 14  frame 12/30"},
		{40, "running 40% seq 14  frame 12/30"},
		{30, "running 40%  frame 12/30"},
		{22, "running 40%  frame..."},
		{20, "running 40%  fra..."},
		{10, "runnin..."},
	} {
		got := fitStatusLine(st, tc.cols)
		require.Equal(t, tc.want, got, "%d columns", tc.cols)
		require.Less(t, termtext.Cells(got), tc.cols)
	}
}

func TestStatusLine_CutsLongMessagesOnATerminalOnly(t *testing.T) {
	long := strings.Repeat("x", 200)
	st := &jobstore.JobStatus{State: jobstore.Running, Seq: 1, Message: long}
	var tty, plain bytes.Buffer
	newWatcher(&tty, fixedWidth(80)).draw(st)
	newWatcher(&plain, nil).draw(st)
	require.Less(t, termtext.Cells(strings.TrimPrefix(tty.String(), "\r")), 80, "a wrapped line cannot be redrawn")
	require.Contains(t, plain.String(), long)
}
