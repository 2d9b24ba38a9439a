package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/internal/testdir"
)

// runCLIStdin is runCLI with stdin as the command's standard input.
func runCLIStdin(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cliTimeout)
	defer cancel()
	cmd := jobstoreCmd(ctx, nil, args...)
	cmd.Stdin = strings.NewReader(stdin)
	return runToEnd(t, cmd, args)
}

// TestSubmit_JSONLinesSubmitsEachLineAsAJob: each line of stdin is a job,
// its fields as job.json holds them; the IDs come out in the order of the
// lines, generated where a line gives none.
func TestSubmit_JSONLinesSubmitsEachLineAsAJob(t *testing.T) {
	root := filepath.Join(testdir.New(t), "jobs")
	in := `{"job_id": "a", "kind": "render", "params": {"frame": 1}}

{"kind": "render", "params": {"frame": 2}, "max_attempts": 3, "labels": {"team": "x"}}
  {"job_id": "c", "kind": "encode", "submitted_by": "bob", "priority": 5}
`
	r := runCLIStdin(t, in, "submit", root, "--jsonl", "--create", "--by", "alice")
	requireCode(t, r, exitOK)
	ids := strings.Fields(r.stdout)
	require.Len(t, ids, 3, "one ID per job:\n%s", r.stdout)
	assert.Equal(t, "a", ids[0])
	assert.Equal(t, "c", ids[2])
	require.NoError(t, jobstore.ValidateJobID(ids[1]))

	for _, tc := range []struct {
		id, kind, by, params string
		attempts, priority   int
	}{
		{ids[0], "render", "alice", `{"frame":1}`, 0, 0},
		{ids[1], "render", "alice", `{"frame":2}`, 3, 0},
		{ids[2], "encode", "bob", "", 0, 5},
	} {
		dir := jobstore.JobDir(filepath.Join(root, tc.id))
		spec, err := jobstore.ReadSpec(dir)
		require.NoError(t, err)
		assert.Equal(t, tc.kind, spec.Kind, tc.id)
		assert.Equal(t, tc.by, spec.SubmittedBy, tc.id)
		assert.Equal(t, tc.params, string(spec.Params), tc.id)
		assert.Equal(t, tc.attempts, spec.MaxAttempts, tc.id)
		assert.Equal(t, tc.priority, spec.Priority, tc.id)
		assert.WithinDuration(t, time.Now(), spec.SubmittedAt, time.Hour, tc.id)
		st, err := jobstore.ReadStatus(dir)
		require.NoError(t, err)
		assert.Equal(t, jobstore.Queued, st.State, tc.id)
	}
	spec, err := jobstore.ReadSpec(jobstore.JobDir(filepath.Join(root, ids[1])))
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"team": "x"}, spec.Labels)
}

// TestSubmit_JSONLinesRefusesABadLineAndSubmitsNothing: a line that is not
// a spec, wherever it is, refuses the whole input: exit 2 naming the line,
// and no job is made.
func TestSubmit_JSONLinesRefusesABadLineAndSubmitsNothing(t *testing.T) {
	good := `{"job_id": "g1", "kind": "k"}` + "\n"
	for _, tc := range []struct {
		name, bad, want string
	}{
		{"not JSON", `{"kind": "k"`, "stdin line 2: not one JSON object"},
		{"an array", `[{"kind": "k"}]`, "stdin line 2: not one JSON object"},
		{"no kind", `{"job_id": "b"}`, "stdin line 2: kind"},
		{"a bad job ID", `{"job_id": "../b", "kind": "k"}`, "stdin line 2: job_id"},
		{"a negative max_attempts", `{"kind": "k", "max_attempts": -1}`, "stdin line 2: max_attempts"},
		{"the job ID of line 1", `{"job_id": "g1", "kind": "k"}`, `stdin line 2: job_id "g1" is line 1's too`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := filepath.Join(testdir.New(t), "jobs")
			require.NoError(t, os.Mkdir(root, 0o755))
			r := runCLIStdin(t, good+tc.bad+"\n"+`{"job_id": "g3", "kind": "k"}`+"\n", "submit", root, "--jsonl")
			requireCode(t, r, exitUsage)
			requireErrorLine(t, r)
			assert.Contains(t, r.stderr, tc.want)
			assert.Empty(t, r.stdout)
			entries, err := os.ReadDir(root)
			require.NoError(t, err)
			assert.Empty(t, entries, "nothing is written")
		})
	}
}

// TestSubmit_JSONLinesStopsAtATakenID: the jobs of the lines before a taken
// ID are made and printed; that line's job and those after it are not:
// exit 3 naming the job.
func TestSubmit_JSONLinesStopsAtATakenID(t *testing.T) {
	root := filepath.Join(testdir.New(t), "jobs")
	requireCode(t, runCLI(t, "submit", root, "--create", "--kind", "k", "--id", "b"), exitOK)
	r := runCLIStdin(t, `{"job_id": "a", "kind": "k"}
{"job_id": "b", "kind": "k"}
{"job_id": "c", "kind": "k"}
`, "submit", root, "--jsonl")
	requireCode(t, r, exitRuntime)
	requireErrorLine(t, r)
	assert.Equal(t, "a\n", r.stdout)
	assert.Contains(t, r.stderr, filepath.Join(root, "b"))
	assert.Contains(t, r.stderr, "already exists")
	assert.NoDirExists(t, filepath.Join(root, "c"))
}

// TestSubmit_JSONLinesRefusesTheFlagsOfOneJob: with --jsonl each line
// describes its job, so a flag that describes one is a usage error.
func TestSubmit_JSONLinesRefusesTheFlagsOfOneJob(t *testing.T) {
	root := testdir.New(t)
	for _, flag := range [][]string{{"--kind", "k"}, {"--id", "x"}, {"--params", "{}"}, {"--label", "a=b"}, {"--max-attempts", "2"}, {"--priority", "1"}} {
		t.Run(flag[0], func(t *testing.T) {
			r := runCLIStdin(t, `{"kind": "k"}`+"\n", append([]string{"submit", root, "--jsonl"}, flag...)...)
			requireCode(t, r, exitUsage)
			assert.Contains(t, r.stderr, flag[0]+" describes one job")
			entries, err := os.ReadDir(root)
			require.NoError(t, err)
			assert.Empty(t, entries, "nothing is written")
		})
	}
}
