package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/clitest"
	"github.com/axqua/jobstore/cmd/jobstore/internal/jobview"
	"github.com/axqua/jobstore/internal/prereq"
	"github.com/axqua/jobstore/internal/testdir"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCancel_QueuedJobIsCancelledAndASecondRequestChangesNothing(t *testing.T) {
	dir := clitest.Submit(t, testdir.New(t), "q1")
	r := runCLI(t, "cancel", string(dir), "--reason", "wrong input", "--by", "alice")
	requireCode(t, r, exitOK)
	require.Empty(t, r.stderr)
	assert.Contains(t, r.stdout, `cancel requested for job q1 by "alice" at `)
	assert.Contains(t, r.stdout, `reason "wrong input"`)
	assert.Contains(t, r.stdout, "job q1 is cancelled")
	r = runCLI(t, "list", filepath.Dir(string(dir)))
	assert.Regexp(t, regexp.MustCompile(`(?m)^q1\s+render\s+cancelled, on request\s`), r.stdout)
	st, err := jobstore.ReadStatus(dir)
	require.NoError(t, err)
	assert.Equal(t, jobstore.Cancelled, st.State)

	r = runCLI(t, "cancel", string(dir), "--reason", "other")
	requireCode(t, r, exitOK)
	assert.Contains(t, r.stdout, `cancel already requested for job q1 by "alice"`)
	assert.Contains(t, r.stdout, "changed nothing")
	req, err := jobstore.ReadCancel(dir)
	require.NoError(t, err)
	assert.Equal(t, "wrong input", req.Reason, "the first request stands")
}

func TestCancel_DefaultRequesterNamesUserAndHost(t *testing.T) {
	dir := clitest.Submit(t, testdir.New(t), "q1")
	r := runCLIEnv(t, []string{"USER=carol", "USERNAME=carol"}, "cancel", string(dir))
	requireCode(t, r, exitOK)
	req, err := jobstore.ReadCancel(dir)
	require.NoError(t, err)
	assert.Regexp(t, `^carol on \S+$`, req.RequestedBy)
	assert.Empty(t, req.Reason)
}

func TestCancel_EndedJobIsExitOneAndNotAJobIsExitThree(t *testing.T) {
	root := testdir.New(t)
	done := clitest.RunJob(t, root, "done", jobstore.Outcome{State: jobstore.Succeeded})
	r := runCLI(t, "cancel", string(done))
	requireCode(t, r, exitUnsuccessful)
	requireErrorLine(t, r)
	assert.Contains(t, r.stderr, "already succeeded")
	assert.NoFileExists(t, done.CancelPath())

	r = runCLI(t, "cancel", filepath.Join(root, "nope"))
	requireCode(t, r, exitRuntime)
	requireErrorLine(t, r)

	r = runCLI(t, "cancel")
	requireCode(t, r, exitUsage)
}

func TestCancel_RunningJobShownByShowListAndReconcile(t *testing.T) {
	root := testdir.New(t)
	dir := clitest.Submit(t, root, "r1")
	run, err := jobstore.Start(dir)
	require.NoError(t, err)
	t.Cleanup(func() { _ = run.Close() })

	r := runCLI(t, "cancel", string(dir), "--reason", "stop <now>", "--by", "bob")
	requireCode(t, r, exitOK)
	assert.Regexp(t, `job r1 is running \(pid \d+ on .*\): its runner has been asked to stop`, r.stdout)

	r = runCLI(t, "show", string(dir))
	requireCode(t, r, exitOK)
	assert.Regexp(t, regexp.MustCompile(`(?m)^cancel\s+cancel requested by "bob" at \S+, reason "stop <now>"$`), r.stdout)

	r = runCLI(t, "show", string(dir), "--json")
	requireCode(t, r, exitOK)
	var shown struct {
		Cancel       *jobstore.CancelRequest `json:"cancel"`
		CancelRecord *jobview.RecordInfo     `json:"cancel_record"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &shown))
	require.NotNil(t, shown.Cancel)
	assert.Equal(t, "stop <now>", shown.Cancel.Reason)
	require.NotNil(t, shown.CancelRecord)
	assert.True(t, shown.CancelRecord.Present)
	assert.Equal(t, jobstore.CancelFile, shown.CancelRecord.File)

	r = runCLI(t, "list", root)
	requireCode(t, r, exitOK)
	assert.Regexp(t, regexp.MustCompile(`(?m)^r1\s+render\s+running, cancel requested\s`), r.stdout)

	r = runCLI(t, "list", root, "--json")
	requireCode(t, r, exitOK)
	var listed struct {
		Jobs []struct {
			Cancel *jobstore.CancelRequest `json:"cancel"`
		} `json:"jobs"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &listed))
	require.Len(t, listed.Jobs, 1)
	require.NotNil(t, listed.Jobs[0].Cancel)
	assert.Equal(t, "bob", listed.Jobs[0].Cancel.RequestedBy)

	require.NoError(t, run.Close()) // the runner goes away without acting on it
	r = runCLI(t, "reconcile", root)
	requireCode(t, r, exitOK)
	assert.Regexp(t, regexp.MustCompile(`(?m)^cancelled\s+r1\s+cancelled: cancel requested by "bob"`), r.stdout)
	assert.Contains(t, r.stdout, "1 job: 0 marked lost, 1 marked cancelled")
}

func TestCancel_NoRequestAddsNothingToShowAndList(t *testing.T) {
	root := testdir.New(t)
	dir := clitest.Submit(t, root, "q1")
	r := runCLI(t, "show", string(dir))
	requireCode(t, r, exitOK)
	assert.NotContains(t, r.stdout, "cancel")
	r = runCLI(t, "show", string(dir), "--json")
	assert.NotContains(t, r.stdout, `"cancel`)
	r = runCLI(t, "list", root)
	assert.NotContains(t, r.stdout, "cancel")
}

func TestCancel_LateRequestIsShownAsTooLate(t *testing.T) {
	root := testdir.New(t)
	dir := clitest.Submit(t, root, "late")
	run, err := jobstore.Start(dir)
	require.NoError(t, err)
	defer run.Close()
	require.NoError(t, jobstore.RequestCancel(dir, jobstore.CancelRequest{Reason: "hurry"}))
	require.NoError(t, run.Finish(jobstore.Outcome{State: jobstore.Succeeded}))
	r := runCLI(t, "list", root)
	requireCode(t, r, exitOK)
	assert.Regexp(t, regexp.MustCompile(`(?m)^late\s+render\s+succeeded, cancel requested too late\s`), r.stdout)
}

func TestWatch_SaysCancelRequested(t *testing.T) {
	dir := clitest.Submit(t, testdir.New(t), "w1")
	run, err := jobstore.Start(dir)
	require.NoError(t, err)
	defer run.Close()
	w := startWatch(t, dir)
	w.waitLine(t, "running")
	require.NoError(t, jobstore.RequestCancel(dir, jobstore.CancelRequest{RequestedBy: "gui", Reason: "enough"}))
	line := w.waitLine(t, "cancel requested")
	assert.Contains(t, line, `"enough"`)
	assert.Contains(t, line, "waiting for the runner to stop")
	require.NoError(t, run.Finish(jobstore.Outcome{State: jobstore.Cancelled}))
	code, last := w.wait(t)
	assert.Equal(t, exitUnsuccessful, code)
	assert.Contains(t, last, "cancelled")
}

// python3 is the python3 interpreter itself (sys.executable: PATH's may be
// a launcher that is slow to start), or the test is skipped.
func python3(t *testing.T) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the Python snippets are run on Unix")
	}
	launcher, err := exec.LookPath("python3")
	if err != nil {
		prereq.Skip(t, "python3", "python3 is not installed: the Python snippets are not run")
	}
	out, err := exec.Command(launcher, "-c", "import sys; print(sys.executable)").Output()
	if py := strings.TrimSpace(string(out)); err == nil && filepath.IsAbs(py) {
		return py
	}
	return launcher
}

// pythonRequestCancel is docs/format.md's request_cancel, with a harness
// that calls it on argv[1] and prints what it returned, or the name of the
// exception it raised.
func pythonRequestCancel(t *testing.T) string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "format.md"))
	require.NoError(t, err)
	for _, m := range regexp.MustCompile("(?s)```python\n(.*?)```").FindAllStringSubmatch(string(doc), -1) {
		if strings.Contains(m[1], "def request_cancel(") {
			return m[1] + `
import sys
try:
    print(request_cancel(sys.argv[1], reason="from python", requested_by="python"))
except Exception as e:
    print(type(e).__name__, e)
`
		}
	}
	t.Fatal("docs/format.md has no Python block defining request_cancel")
	return ""
}

// A cancel request has one meaning whoever makes it: RequestCancel, jobstore
// cancel and the Python function of docs/format.md, each on its own copy of
// a job in each state, accept it (nil, exit 0, True or False), refuse it for
// a job that has ended (ErrWrongState, exit 1, ValueError) or fail (status.json
// is a FIFO: ErrNotRegular, exit 3, OSError) alike; and each says whether
// its request is the one that stands (the first one does).
func TestCancel_PythonGoAndTheCommandAgreeInEveryState(t *testing.T) {
	py := python3(t)
	script := filepath.Join(testdir.New(t), "request_cancel.py")
	require.NoError(t, os.WriteFile(script, []byte(pythonRequestCancel(t)), 0o644))
	earlier := []byte(`{"schema_version": 1, "job_id": "j", "requested_at": "2026-01-02T03:04:05Z", "requested_by": "earlier"}`)
	states := []struct {
		name    string
		state   jobstore.State // "": no status.json
		request bool           // a cancel.json is there already
		fifo    bool           // status.json is a FIFO
		want    string         // accepted, refused, failed
	}{
		{"nothing has run", "", false, false, "accepted"},
		{"queued", jobstore.Queued, false, false, "accepted"},
		{"queued, requested", jobstore.Queued, true, false, "accepted"},
		{"running", jobstore.Running, false, false, "accepted"},
		{"running, requested", jobstore.Running, true, false, "accepted"},
		{"cancelled, requested", jobstore.Cancelled, true, false, "accepted"}, // a second request
		{"cancelled", jobstore.Cancelled, false, false, "refused"},
		{"succeeded", jobstore.Succeeded, false, false, "refused"},
		{"succeeded, requested too late", jobstore.Succeeded, true, false, "refused"},
		{"failed", jobstore.Failed, false, false, "refused"},
		{"lost", jobstore.Lost, false, false, "refused"},
		{"status.json is a FIFO", "", false, true, "failed"},
	}
	for _, tc := range states {
		t.Run(tc.name, func(t *testing.T) {
			// job is a fresh copy of the job in this state.
			job := func(t *testing.T) jobstore.JobDir {
				dir := clitest.Submit(t, testdir.New(t), "j")
				require.NoError(t, os.Remove(dir.StatusPath()))
				if tc.state != "" {
					require.NoError(t, jobstore.WriteStatus(dir, jobstore.JobStatus{State: tc.state, Seq: 2}))
				}
				if tc.request {
					require.NoError(t, os.WriteFile(dir.CancelPath(), earlier, 0o444))
				}
				if tc.fifo {
					if err := clitest.Mkfifo(dir.StatusPath()); err != nil {
						t.Skipf("no FIFOs here: %v", err)
					}
				}
				return dir
			}
			// stands: the request that stands is the one just made by who.
			stands := func(t *testing.T, dir jobstore.JobDir, who string) bool {
				req, err := jobstore.ReadCancel(dir)
				require.NoError(t, err)
				return req != nil && req.RequestedBy == who
			}

			dir := job(t)
			err := jobstore.RequestCancel(dir, jobstore.CancelRequest{RequestedBy: "go"})
			goSaid := "accepted"
			switch {
			case errors.Is(err, jobstore.ErrWrongState):
				goSaid = "refused"
			case err != nil:
				goSaid = "failed"
			}
			require.Equal(t, tc.want, goSaid, "RequestCancel: %v", err)
			goStands := stands(t, dir, "go")

			dir = job(t)
			r := runCLI(t, "cancel", string(dir), "--by", "cli")
			cliSaid := map[int]string{exitOK: "accepted", exitUnsuccessful: "refused", exitRuntime: "failed"}[r.code]
			require.Equal(t, tc.want, cliSaid, "jobstore cancel: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			require.Equal(t, goStands, stands(t, dir, "cli"))
			if cliSaid == "accepted" {
				require.Equal(t, goStands, strings.Contains(r.stdout, "cancel requested for job j "), r.stdout)
				require.Equal(t, !goStands, strings.Contains(r.stdout, "cancel already requested for job j "), r.stdout)
			}

			dir = job(t)
			ctx, cancel := context.WithTimeout(context.Background(), cliTimeout) // a hang guard
			defer cancel()
			out, err := exec.CommandContext(ctx, py, script, string(dir)).CombinedOutput()
			require.NoError(t, err, "python: %s", out)
			said := strings.TrimSpace(string(out))
			pySaid := map[string]string{"True": "accepted", "False": "accepted"}[said]
			switch {
			case strings.HasPrefix(said, "ValueError "):
				pySaid = "refused"
			case strings.HasPrefix(said, "OSError "):
				pySaid = "failed"
			}
			require.Equal(t, tc.want, pySaid, "request_cancel said %q", said)
			require.Equal(t, goStands, stands(t, dir, "python"))
			if pySaid == "accepted" {
				require.Equal(t, strconv.FormatBool(goStands), strings.ToLower(said), "True: this call's request stands")
			}
		})
	}
}
