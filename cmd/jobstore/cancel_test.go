package main

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/internal/testdir"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCancel_QueuedJobIsCancelledAndASecondRequestChangesNothing(t *testing.T) {
	dir := submit(t, testdir.New(t), "q1")
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
	dir := submit(t, testdir.New(t), "q1")
	r := runCLIEnv(t, []string{"USER=carol", "USERNAME=carol"}, "cancel", string(dir))
	requireCode(t, r, exitOK)
	req, err := jobstore.ReadCancel(dir)
	require.NoError(t, err)
	assert.Regexp(t, `^carol on \S+$`, req.RequestedBy)
	assert.Empty(t, req.Reason)
}

func TestCancel_EndedJobIsExitOneAndNotAJobIsExitThree(t *testing.T) {
	root := testdir.New(t)
	done := runJob(t, root, "done", jobstore.Outcome{State: jobstore.Succeeded})
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
	dir := submit(t, root, "r1")
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
		CancelRecord *recordInfo             `json:"cancel_record"`
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
	dir := submit(t, root, "q1")
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
	dir := submit(t, root, "late")
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
	dir := submit(t, testdir.New(t), "w1")
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
