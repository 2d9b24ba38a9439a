package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/clitest"
	"github.com/axqua/jobstore/cmd/jobstore/internal/jobview"
	"github.com/axqua/jobstore/cmd/jobstore/internal/termtext"
	"github.com/axqua/jobstore/internal/testdir"
	"github.com/stretchr/testify/require"
)

// What a hostile submitter and runner write into a job's records: a colour
// sequence, a title sequence ended by BEL, an 8-bit CSI (U+009B), bidi
// overrides and isolates.
const (
	hostileKind    = "\x1b[31mred\u202e"
	hostileBy      = "\x1b]0;pwned\x07"
	hostileLabel   = "\x1b[2J"
	hostileMessage = "\x1b]0;title\x07 \u009b2J"
	hostileError   = "bad\x07\x1b[1A"
	hostileRemedy  = "\u2066fix\u2069"
	// hostileDirName is a directory name that is not valid UTF-8 and holds
	// an escape sequence (not a name Windows allows).
	hostileDirName = "bad\xff\x1b[2J"
)

// hostileRoot makes a root with a job that ended failed, every text of it
// hostile, and (where file names allow it) a directory with a hostile
// name that is not a job.
func hostileRoot(t *testing.T) (root string, dir jobstore.JobDir) {
	t.Helper()
	root = testdir.New(t)
	dir, err := jobstore.Submit(root, jobstore.JobSpec{ID: "hostile", Kind: hostileKind, SubmittedBy: hostileBy,
		Labels: map[string]string{"team": hostileLabel}})
	require.NoError(t, err)
	run, err := jobstore.Start(dir, jobstore.WithProgressInterval(0))
	require.NoError(t, err)
	defer run.Close()
	require.NoError(t, run.Progress(0.5, hostileMessage))
	require.NoError(t, run.Finish(jobstore.Outcome{State: jobstore.Failed, Message: hostileMessage,
		Error: hostileError, Remedy: hostileRemedy, ExitCode: intPtr(2)}))
	if runtime.GOOS != "windows" {
		bad := filepath.Join(root, hostileDirName)
		require.NoError(t, os.Mkdir(bad, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(bad, jobstore.SpecFile), []byte("{"), 0o644))
	}
	return root, dir
}

// requireTerminalSafe checks that out holds nothing a terminal acts on,
// and that the hostile texts are shown, escaped, rather than dropped.
func requireTerminalSafe(t *testing.T, out string, shown ...string) {
	t.Helper()
	require.True(t, utf8.ValidString(out), "invalid UTF-8 reaches the terminal:\n%q", out)
	for _, r := range out {
		if r == '\n' {
			continue
		}
		require.False(t, clitest.TerminalActsOn(r), "%U reaches the terminal:\n%q", r, out)
	}
	for _, s := range shown {
		require.Contains(t, out, termtext.EscapeTerminal(s))
	}
}

func TestList_EscapesWhatATerminalWouldActOn(t *testing.T) {
	root, _ := hostileRoot(t)
	r := runCLI(t, "list", root)
	requireCode(t, r, exitOK)
	shown := []string{hostileKind}
	if runtime.GOOS != "windows" {
		shown = append(shown, hostileDirName)
	}
	requireTerminalSafe(t, r.stdout, shown...)

	// --json keeps the exact strings.
	r = runCLI(t, "list", root, "--json")
	requireCode(t, r, exitOK)
	var out jobview.ListJSON
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out))
	var found bool
	for _, j := range out.Jobs {
		if j.ID == "hostile" {
			found = true
			require.Equal(t, hostileKind, j.Spec.Kind)
			require.Equal(t, hostileMessage, j.Status.Message)
			require.Equal(t, hostileError, j.Status.Error)
		}
	}
	require.True(t, found, r.stdout)
}

func TestListWatch_EscapesWhatATerminalWouldActOn(t *testing.T) {
	root, _ := hostileRoot(t)
	// Piped: the table, then a line per change.
	w := startLines(t, "list", root, "--watch", "--interval", watchPoll.String())
	w.waitLine(t, "hostile")
	dir, err := jobstore.Submit(root, jobstore.JobSpec{ID: "hostile-2", Kind: hostileKind})
	require.NoError(t, err)
	run, err := jobstore.Start(dir, jobstore.WithProgressInterval(0))
	require.NoError(t, err)
	defer run.Close()
	require.NoError(t, run.Progress(0.5, hostileMessage+" again"))
	w.waitLine(t, "again")
	requireTerminalSafe(t, strings.Join(w.seen, "\n"), hostileKind, hostileMessage+" again")

	// On a terminal: the table fitted to the screen.
	entries, err := jobstore.List(root)
	require.NoError(t, err)
	noCancel := func(jobstore.JobDir) (*jobstore.CancelRequest, jobview.RecordInfo) { return nil, jobview.RecordInfo{} }
	lines := screenLines(root, entries, time.Now(), noCancel, "Ctrl-C stops watching "+root, 200, 50)
	requireTerminalSafe(t, strings.Join(lines, "\n"), hostileKind)
}

func TestShow_EscapesWhatATerminalWouldActOn(t *testing.T) {
	_, dir := hostileRoot(t)
	r := runCLI(t, "show", string(dir))
	requireCode(t, r, exitOK)
	requireTerminalSafe(t, r.stdout, hostileKind, hostileBy, hostileLabel, hostileMessage, hostileError, hostileRemedy)

	r = runCLI(t, "show", string(dir), "--json")
	requireCode(t, r, exitOK)
	var out jobview.ShowJSON
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out))
	require.Equal(t, hostileKind, out.Spec.Kind)
	require.Equal(t, hostileBy, out.Spec.SubmittedBy)
	require.Equal(t, hostileLabel, out.Spec.Labels["team"])
	require.Equal(t, hostileMessage, out.Status.Message)
	require.Equal(t, hostileRemedy, out.Status.Remedy)
}

func TestWatch_EscapesWhatATerminalWouldActOn(t *testing.T) {
	_, dir := hostileRoot(t)
	r := runCLI(t, "watch", string(dir))
	requireCode(t, r, exitUnsuccessful)
	requireTerminalSafe(t, r.stdout, hostileMessage, hostileError, hostileRemedy)

	r = runCLI(t, "watch", string(dir), "--json")
	requireCode(t, r, exitUnsuccessful)
	var last watchEventJSON
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		require.NoError(t, json.Unmarshal([]byte(line), &last))
		require.Equal(t, hostileMessage, last.Status.Message)
	}
	require.Equal(t, "end", last.Event)
	require.Contains(t, last.Message, hostileError, "the JSON message keeps the exact text")

	// On a terminal: the redrawn line.
	var b strings.Builder
	w := newWatcher(&b, fixedWidth(120))
	st, err := jobstore.ReadStatus(dir)
	require.NoError(t, err)
	st.State = jobstore.Running
	w.draw(st)
	requireTerminalSafe(t, strings.ReplaceAll(b.String(), "\r", ""), hostileMessage)
}

func TestRmAndPrune_EscapeWhatATerminalWouldActOn(t *testing.T) {
	out := removeJSON{Jobs: []removeJobJSON{}}
	out.add(jobstore.JobDir("/r/"+hostileDirName), nil, "", &jobstore.Error{Op: "remove", Path: "/r/" + hostileDirName, Msg: hostileError})
	var b strings.Builder
	require.NoError(t, printRemoval(&env{stdout: &b}, false, out, ""))
	requireTerminalSafe(t, b.String(), hostileDirName, hostileError)
}

func TestWaitCheckAndReconcile_EscapeWhatATerminalWouldActOn(t *testing.T) {
	root, dir := hostileRoot(t)
	r := runCLI(t, "wait", string(dir))
	requireCode(t, r, exitUnsuccessful)
	requireTerminalSafe(t, r.stdout, hostileError, hostileRemedy)

	r = runCLI(t, "check", root)
	requireCode(t, r, exitUnsuccessful) // the directory that is not a job
	shown := []string{}
	if runtime.GOOS != "windows" {
		shown = append(shown, hostileDirName)
	}
	requireTerminalSafe(t, r.stdout, shown...)

	// A job whose runner is gone, its status written by a hostile runner.
	gone, err := jobstore.Submit(root, jobstore.JobSpec{ID: "gone", Kind: hostileKind})
	require.NoError(t, err)
	started := time.Now()
	require.NoError(t, jobstore.WriteStatus(gone, jobstore.JobStatus{State: jobstore.Running, Seq: 2,
		Message: hostileMessage, Host: hostileBy, PID: 1, StartedAt: &started}))
	r = runCLI(t, "reconcile", root)
	requireTerminalSafe(t, r.stdout)
	require.Contains(t, r.stdout, "gone")
}
