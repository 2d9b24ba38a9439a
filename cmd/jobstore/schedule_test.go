package main

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/jobview"
)

// listScheduleRoot is a root of five queued jobs: "later" (not_before in 2
// hours, priority 5), "retrying" (its first attempt failed, a retry due in
// an hour or two), "retry-due" (a retry whose time has come, waiting for a
// worker), "due" (its not_before passed) and "plain".
func listScheduleRoot(t *testing.T) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "jobs")
	now := time.Now()
	for _, spec := range []jobstore.JobSpec{
		{ID: "later", Kind: "render", NotBefore: now.Add(2 * time.Hour), Priority: 5},
		{ID: "retrying", Kind: "render", MaxAttempts: 3, Backoff: 2 * time.Hour},
		{ID: "due", Kind: "render", NotBefore: now.Add(-time.Minute)},
		{ID: "plain", Kind: "encode"},
	} {
		_, err := jobstore.Submit(root, spec)
		require.NoError(t, err)
	}
	run, err := jobstore.Start(jobstore.JobDir(filepath.Join(root, "retrying")))
	require.NoError(t, err)
	require.NoError(t, run.Finish(jobstore.Outcome{State: jobstore.Failed, Error: "network down"}))
	require.NoError(t, run.Close())
	st := status(t, jobstore.JobDir(filepath.Join(root, "retrying")))
	require.Equal(t, jobstore.Queued, st.State, "a failed attempt with attempts left is queued again")
	require.NotNil(t, st.RetryAt)

	dir, err := jobstore.Submit(root, jobstore.JobSpec{ID: "retry-due", Kind: "render", MaxAttempts: 3})
	require.NoError(t, err)
	ended := jobstore.Now().Add(-time.Minute)
	require.NoError(t, jobstore.WriteStatus(dir, jobstore.JobStatus{State: jobstore.Queued, Seq: 3, RetryAt: &ended,
		Attempts: []jobstore.AttemptEnd{{Attempt: 1, State: jobstore.Failed, EndedAt: ended, Error: "boom"}}}))
	return root
}

// TestList_ShowsWhenAQueuedJobIsDue: a queued job that will not start yet
// says when in list's STATE and show's state, the filter states scheduled
// and retrying choose those jobs, and the JSON carries the due time.
func TestList_ShowsWhenAQueuedJobIsDue(t *testing.T) {
	root := listScheduleRoot(t)

	r := runCLI(t, "list", root)
	requireCode(t, r, exitOK)
	for id, state := range map[string]string{
		"later":     `queued, due in 2h, priority 5`,
		"retrying":  `queued, retrying in (1h([0-9]+m)?|2h), attempt 2/3`,
		"retry-due": `queued, attempt 2/3`,
		"due":       `queued`,
		"plain":     `queued`,
	} {
		assert.Regexp(t, `(?m)^`+id+`\s+\S+\s+`+state+`\s+-\s`, r.stdout, "list's row of %s", id)
	}

	for _, c := range []struct {
		states string
		want   []string
	}{
		{"scheduled", []string{"later"}},
		{"retrying", []string{"retrying", "retry-due"}},
		{"scheduled,retrying", []string{"later", "retrying", "retry-due"}},
		{"queued", []string{"later", "retrying", "due", "plain", "retry-due"}},
		{"running", []string{}},
	} {
		t.Run("--state "+c.states, func(t *testing.T) {
			require.Equal(t, c.want, listIDs(t, root, "--state", c.states))
		})
	}

	r = runCLI(t, "list", root, "--json", "--state", "scheduled,retrying", "--limit", "2")
	requireCode(t, r, exitOK)
	var out struct {
		Jobs []struct {
			ID       string     `json:"job_id"`
			DueAt    *time.Time `json:"due_at"`
			Retrying bool       `json:"retrying"`
		} `json:"jobs"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out))
	require.Len(t, out.Jobs, 2)
	later, retrying := out.Jobs[0], out.Jobs[1]
	require.NotNil(t, later.DueAt)
	assert.WithinDuration(t, time.Now().Add(2*time.Hour), *later.DueAt, time.Hour, "later's due_at is its not_before")
	assert.False(t, later.Retrying)
	require.NotNil(t, retrying.DueAt)
	assert.Equal(t, status(t, jobstore.JobDir(filepath.Join(root, "retrying"))).RetryAt.UTC(), retrying.DueAt.UTC())
	assert.True(t, retrying.Retrying)

	r = runCLI(t, "show", filepath.Join(root, "later"))
	requireCode(t, r, exitOK)
	assert.Regexp(t, `(?m)^state\s+queued, due in 2h, priority 5$`, r.stdout)
	r = runCLI(t, "show", filepath.Join(root, "plain"), "--json")
	requireCode(t, r, exitOK)
	assert.NotContains(t, r.stdout, `"due_at"`, "a job without not_before or retry_at has no due time")
	assert.NotRegexp(t, regexp.MustCompile(`(?m)^state\s+queued,`), runCLI(t, "show", filepath.Join(root, "due")).stdout,
		"a job whose not_before passed is plain queued")
}

func TestFmtUntil_RoundsUpToTwoUnits(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{
		{300 * time.Millisecond, "1s"},
		{30 * time.Second, "30s"},
		{29*time.Second + time.Millisecond, "30s"},
		{time.Minute, "60s"},
		{4*time.Minute + 30*time.Second, "4m30s"},
		{5 * time.Minute, "5m"},
		{2*time.Hour - time.Millisecond, "2h"},
		{90 * time.Minute, "1h30m"},
		{25 * time.Minute, "25m"},
		{3 * 24 * time.Hour, "3d"},
		{3*24*time.Hour + 3*time.Hour + time.Second, "3d4h"},
	} {
		t.Run(c.d.String(), func(t *testing.T) {
			assert.Equal(t, c.want, jobview.FmtUntil(c.d))
		})
	}
}
