package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/clitest"
	"github.com/axqua/jobstore/cmd/jobstore/internal/jobview"
	"github.com/axqua/jobstore/internal/testdir"
	"github.com/stretchr/testify/require"
)

// fixtureRoot makes a root with a job in each situation list and show must
// render: queued (submitted by the binary), succeeded (run with the runner
// handle), failed, a corrupt status.json, and a status from a newer jobstore.
func fixtureRoot(t *testing.T) string {
	t.Helper()
	root := testdir.New(t)
	r := runCLI(t, "submit", root, "--kind", "render", "--id", "a-queued", "--by", "tester",
		"--params", `{"frames": 30, "scene": "<intro>"}`, "--label", "team=vfx", "--label", "prio=high")
	requireCode(t, r, exitOK)
	require.Equal(t, "a-queued\n", r.stdout)

	clitest.RunJob(t, root, "b-done", jobstore.Outcome{State: jobstore.Succeeded, Message: "rendered 30 frames", ExitCode: intPtr(0)})
	clitest.RunJob(t, root, "c-failed", jobstore.Outcome{State: jobstore.Failed, Message: "stopped", ExitCode: intPtr(2),
		Error: "frame 15: disk full", Remedy: "free some space and submit again"})

	dir := clitest.Submit(t, root, "d-corrupt")
	require.NoError(t, os.WriteFile(dir.StatusPath(), []byte(`{"state": "runn`), 0o644))
	dir = clitest.Submit(t, root, "e-newer")
	require.NoError(t, os.WriteFile(dir.StatusPath(), []byte(`{"schema_version": 9, "state": "teleported"}`), 0o644))
	return root
}

func intPtr(n int) *int { return &n }

func TestList_TableShowsEveryJobAndWhyUnreadableOnesAre(t *testing.T) {
	root := fixtureRoot(t)
	r := runCLI(t, "list", root)
	requireCode(t, r, exitOK)
	require.Empty(t, r.stderr)
	golden(t, "list.golden", normalize(r.stdout, rootPairs(root)...))
}

func TestList_JSON(t *testing.T) {
	root := fixtureRoot(t)
	r := runCLI(t, "list", root, "--json")
	requireCode(t, r, exitOK)
	golden(t, "list_json.golden", normalize(r.stdout, rootPairs(root)...))

	var out jobview.ListJSON
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out))
	require.Len(t, out.Jobs, 5)
	byID := map[string]jobview.ListJobJSON{}
	for _, j := range out.Jobs {
		byID[j.ID] = j
	}
	require.Equal(t, jobstore.Succeeded, byID["b-done"].Status.State)
	require.Nil(t, byID["b-done"].Error)
	require.Equal(t, "corrupt", byID["d-corrupt"].Error.Kind)
	require.NotEmpty(t, byID["d-corrupt"].Error.Remedy)
	require.Equal(t, "newer_schema", byID["e-newer"].Error.Kind)
	require.Equal(t, "schema_version", byID["e-newer"].Error.Subject)
	require.Nil(t, out.Index, "no index without --rebuild")
}

func TestList_RebuildWritesIndexWithUnreadableJobs(t *testing.T) {
	root := fixtureRoot(t)
	r := runCLI(t, "list", root, "--rebuild")
	requireCode(t, r, exitOK)
	require.Contains(t, r.stdout, jobstore.IndexFile+" rebuilt at")
	require.Contains(t, r.stdout, "3 jobs, 2 unreadable")

	ix, err := jobstore.ReadIndex(root)
	require.NoError(t, err)
	require.Len(t, ix.Jobs, 3)
	require.Len(t, ix.Unreadable, 2)

	r = runCLI(t, "list", root, "--json", "--rebuild")
	requireCode(t, r, exitOK)
	var out jobview.ListJSON
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out))
	require.NotNil(t, out.Index)
	require.Equal(t, 3, out.Index.Jobs)
	require.Equal(t, 2, out.Index.Unreadable)
	require.Equal(t, filepath.Join(root, jobstore.IndexFile), out.Index.Path)
}

func TestList_EmptyRoot(t *testing.T) {
	root := testdir.New(t)
	r := runCLI(t, "list", root)
	requireCode(t, r, exitOK)
	require.Equal(t, "no jobs under "+root+"\n", r.stdout)
	r = runCLI(t, "list", root, "--json")
	requireCode(t, r, exitOK)
	var out jobview.ListJSON
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out))
	require.NotNil(t, out.Jobs, `"jobs" is [] for an empty root, never null`)
	require.Empty(t, out.Jobs)
}

// What submit writes, list --json reads back: the spec round-trips through
// the binary and the files.
func TestSubmit_ThenListJSONRoundTrips(t *testing.T) {
	root := testdir.New(t)
	paramsFile := filepath.Join(testdir.New(t), "params.json")
	params := `{"frames": 30, "scene": "<intro> & \"outro\"", "scale": [1, 2.5]}`
	require.NoError(t, os.WriteFile(paramsFile, []byte(params), 0o644))

	r := runCLI(t, "submit", "--kind", "render", root, "--params", "@"+paramsFile,
		"--label", "team=vfx", "--label", "note=a=b", "--by", "tester")
	requireCode(t, r, exitOK)
	id := r.stdout[:len(r.stdout)-1]
	require.NoError(t, jobstore.ValidateJobID(id), "submit prints the ID alone on a line")

	r2 := runCLI(t, "submit", root, "--kind", "other")
	requireCode(t, r2, exitOK)

	r = runCLI(t, "list", root, "--json")
	requireCode(t, r, exitOK)
	var out jobview.ListJSON
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out))
	require.Len(t, out.Jobs, 2)
	got := out.Jobs[0]
	require.Equal(t, id, got.ID, "oldest submission first")
	require.Nil(t, got.Error)
	require.Equal(t, id, got.Spec.ID)
	require.Equal(t, "render", got.Spec.Kind)
	require.Equal(t, "tester", got.Spec.SubmittedBy)
	require.Equal(t, map[string]string{"team": "vfx", "note": "a=b"}, got.Spec.Labels)
	require.JSONEq(t, params, string(got.Spec.Params))
	require.Equal(t, jobstore.Queued, got.Status.State)
	require.Equal(t, uint64(1), got.Status.Seq)

	onDisk, err := jobstore.ReadSpec(jobstore.JobDir(got.Dir))
	require.NoError(t, err)
	require.Equal(t, onDisk, *got.Spec)
}

func TestSubmit_TakenIDIsARuntimeError(t *testing.T) {
	root := testdir.New(t)
	requireCode(t, runCLI(t, "submit", root, "--kind", "k", "--id", "same"), exitOK)
	r := runCLI(t, "submit", root, "--kind", "k", "--id", "same")
	requireCode(t, r, exitRuntime)
	requireErrorLine(t, r)
	require.Contains(t, r.stderr, "already exists")
}
