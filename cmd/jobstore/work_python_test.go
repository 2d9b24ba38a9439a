package main

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/axqua/jobstore/internal/prereq"
	"github.com/axqua/jobstore/internal/testdir"
	"github.com/stretchr/testify/require"
)

// A Python program (standard library only) submits two jobs by writing
// their records, runs "jobstore work" on them with a Python command, and
// reads how they ended.
func TestWork_PythonSubmitsRunsAndReads(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the Python interop tests run on Unix")
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		prereq.Skip(t, "python3", "python3 is not installed: Python interop not checked")
	}
	root := filepath.Join(testdir.New(t), "jobs")
	ctx, cancel := context.WithTimeout(context.Background(), cliTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, filepath.Join("testdata", "python", "pipeline.py"), cli, root,
		filepath.Join("testdata", "python", "job.py"))
	cmd.Env = append(cmd.Environ(), cliEnv...)
	out, err := cmd.Output()
	var stderr string
	if ee, ok := err.(*exec.ExitError); ok {
		stderr = string(ee.Stderr)
	}
	require.NoError(t, err, "%s", stderr)

	type jobResult struct {
		ID       string         `json:"job_id"`
		State    string         `json:"state"`
		ExitCode *int           `json:"exit_code"`
		Progress *float64       `json:"progress"`
		Message  string         `json:"message"`
		Result   map[string]any `json:"result"`
		Stdout   string         `json:"stdout"`
		Stderr   string         `json:"stderr"`
	}
	var got []jobResult
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var r jobResult
		require.NoError(t, json.Unmarshal([]byte(line), &r), "%s", out)
		got = append(got, r)
	}
	require.Len(t, got, 2)
	ok, bad := got[0], got[1]
	require.Equal(t, "succeeded", ok.State)
	require.Equal(t, 0, *ok.ExitCode)
	require.Equal(t, 1.0, *ok.Progress)
	require.Equal(t, "added 4", ok.Message, "the command's last progress message stays")
	require.Equal(t, map[string]any{"job_id": "sum-ok", "sum": 10.0}, ok.Result)
	require.Regexp(t, `\A\[jobstore: attempt 1 began [^\n]+\]\n\z`, ok.Stdout, "the progress lines are not kept")
	require.Equal(t, "a line on stderr\n", withoutMarkers(ok.Stderr))
	require.Equal(t, "failed", bad.State)
	require.Equal(t, 3, *bad.ExitCode)
	require.Equal(t, 5.0, bad.Result["sum"])
}
