package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/internal/prereq"
	"github.com/axqua/jobstore/internal/testdir"
)

// TestReadme_PythonSubmitsJobstoreWorkRunsPythonPolls is a new user's path
// by the README alone: its Python block submits a job, "jobstore work
// --until-empty" runs it with a command, and the Python block's poll and
// wait see it end.
func TestReadme_PythonSubmitsJobstoreWorkRunsPythonPolls(t *testing.T) {
	py := python3(t)
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	block := regexp.MustCompile("(?ms)^```python\n(.*?)^```\n").FindSubmatch(readme)
	require.NotNil(t, block, "README.md has no ```python block")
	tmp := testdir.New(t)
	script := filepath.Join(tmp, "example.py")
	require.NoError(t, os.WriteFile(script, block[1], 0o644))
	module, err := filepath.Abs(filepath.Join("..", "..", "python"))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), cliTimeout)
	defer cancel()
	example := func(args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(ctx, py, append([]string{script}, args...)...)
		cmd.Env = append(os.Environ(), "PYTHONPATH="+module, "PYTHONDONTWRITEBYTECODE=1")
		out, err := cmd.Output()
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		require.NoError(t, err, "%s", stderr)
		return strings.TrimSpace(string(out))
	}

	root := filepath.Join(tmp, "jobs")
	require.NoError(t, os.Mkdir(root, 0o755)) // a root workers take jobs from: submit makes none
	dir := example("submit", root)
	require.Equal(t, root, filepath.Dir(dir))

	job := `import json, sys; frames = json.load(sys.stdin)["frames"]; print("progress 1 %d frames" % frames, flush=True)`
	r := runCLI(t, "work", root, "--until-empty", "--", py, "-c", job)
	requireCode(t, r, 0)
	st, err := jobstore.ReadStatus(jobstore.JobDir(dir))
	require.NoError(t, err)
	require.NotNil(t, st, "jobstore work did not start the job: it has no status.json")
	require.Equal(t, jobstore.Succeeded, st.State, "%+v", st)

	lines := strings.Split(example("poll", dir), "\n")
	assert.True(t, strings.HasPrefix(lines[len(lines)-1], "succeeded 100% "), "poll printed %q", lines)
	assert.True(t, strings.HasPrefix(example("wait", dir), "succeeded"))
}

// pipTimeout bounds creating a virtual environment and installing into it;
// it only guards against a hang.
const pipTimeout = 2 * time.Minute

// TestReadme_PipInstallsThePythonModuleOffline follows the README's pip
// route: a fresh virtual environment, then pip install of python/, with no
// package index (PEP 517 build isolation would otherwise fetch a build
// backend from one), and the module imports from the environment.
func TestReadme_PipInstallsThePythonModuleOffline(t *testing.T) {
	py := python3(t)
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	const route = "python3 -m venv .venv && .venv/bin/pip install ../jobstore/python"
	require.True(t, strings.Contains(string(readme), route), "README.md no longer gives the pip route %q this test follows", route)
	ctx, cancel := context.WithTimeout(context.Background(), pipTimeout)
	t.Cleanup(cancel)
	tmp := testdir.New(t)
	venv := filepath.Join(tmp, "venv")
	run := func(name string, args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Dir = tmp
		cmd.Env = append(os.Environ(), "PIP_NO_INDEX=1", "PIP_FIND_LINKS=", "PIP_DISABLE_PIP_VERSION_CHECK=1",
			"PYTHONDONTWRITEBYTECODE=1", "PYTHONPATH=")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s %s:\n%s", name, strings.Join(args, " "), out)
		return strings.TrimSpace(string(out))
	}
	if out, err := exec.CommandContext(ctx, py, "-m", "venv", venv).CombinedOutput(); err != nil {
		prereq.Skip(t, "python3", "python3 cannot make a virtual environment with pip (Debian: apt-get install python3-venv): "+strings.TrimSpace(string(out)))
	}
	module, err := filepath.Abs(filepath.Join("..", "..", "python"))
	require.NoError(t, err)
	// A copy, so that the build leaves nothing in the repository.
	src := filepath.Join(tmp, "python")
	require.NoError(t, os.CopyFS(src, os.DirFS(module)))
	run(filepath.Join(venv, "bin", "pip"), "install", "--no-index", src)
	got := run(filepath.Join(venv, "bin", "python"), "-c", "import jobstore; print(jobstore.__file__)")
	assert.True(t, strings.HasPrefix(got, venv), "jobstore imported from %s, not from the virtual environment %s", got, venv)
}
