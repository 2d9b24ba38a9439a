//go:build unix

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/internal/testdir"
	"github.com/stretchr/testify/require"
)

// jobSnapshot is everything in a job directory: each entry's name, and
// a regular file's content.
func jobSnapshot(t *testing.T, dir jobstore.JobDir) map[string]string {
	t.Helper()
	snap := map[string]string{}
	entries, err := os.ReadDir(string(dir))
	require.NoError(t, err)
	for _, e := range entries {
		snap[e.Name()] = "(" + e.Type().String() + ")"
		if e.Type().IsRegular() {
			snap[e.Name()] = readText(t, filepath.Join(string(dir), e.Name()))
		}
	}
	return snap
}

// submitMany submits n jobs of kind k, IDs j00, j01, ..., and returns
// them with what each job directory held then.
func submitMany(t *testing.T, root string, n int) ([]jobstore.JobDir, []map[string]string) {
	t.Helper()
	var dirs []jobstore.JobDir
	var snaps []map[string]string
	for i := range n {
		dir := submitKind(t, root, fmt.Sprintf("j%02d", i), "k", "")
		dirs = append(dirs, dir)
		snaps = append(snaps, jobSnapshot(t, dir))
	}
	return dirs, snaps
}

// failFastWindow is --fail-fast-within where a test's jobs must count as
// failing fast: far longer than "sh -c 'exit 2'" takes on any machine.
const failFastWindow = "1m"

// requireFailedAndUntouched checks that exactly wantFailed of dirs failed
// (with at least one such job, a job started before it, oldest first) and
// that every other job directory is byte for byte as it was at submit
// (snaps): never claimed, no attempt.
func requireFailedAndUntouched(t *testing.T, dirs []jobstore.JobDir, snaps []map[string]string, wantFailed int) {
	t.Helper()
	failed := 0
	for i, dir := range dirs {
		st := status(t, dir)
		if st.State == jobstore.Failed {
			failed++
			continue
		}
		require.Equal(t, jobstore.Queued, st.State, "job %s", dir.ID())
		require.Equal(t, snaps[i], jobSnapshot(t, dir), "job %s was touched", dir.ID())
	}
	require.Equal(t, wantFailed, failed, "failed jobs")
}

// A command that is found but cannot be started (its #! interpreter is
// missing) fails one job, however many slots the worker has: the next job
// is claimed only once a command has started. The worker then stops,
// naming the command and the cause; the other jobs are never claimed. A
// command that cannot be found, or is not executable, takes no job.
func TestWork_CommandThatCannotStartFailsOneJob(t *testing.T) {
	const queued = 10
	for _, tc := range []struct {
		name       string
		script     string // the command file's content; "": none
		mode       os.FileMode
		parallel   string
		wantFailed int
		wantCode   int
		wantSaid   []string
	}{
		{"bad interpreter, one slot", "#!/no/such/interpreter\n", 0o755, "1", 1, exitBroken,
			[]string{"cannot be started on this host", "the interpreter its #! line names", "job j00 failed, and no other job was started"}},
		{"bad interpreter, six slots", "#!/no/such/interpreter\n", 0o755, "6", 1, exitBroken,
			[]string{"cannot be started on this host", "the interpreter its #! line names", "job j00 failed, and no other job was started"}},
		{"bad interpreter, twelve slots", "#!/no/such/interpreter\n", 0o755, "12", 1, exitBroken,
			[]string{"cannot be started on this host"}},
		{"not executable", "#!/bin/sh\nexit 0\n", 0o644, "6", 0, exitRuntime, []string{"cannot run", "permission denied"}},
		{"missing", "", 0, "6", 0, exitRuntime, []string{"cannot run"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := testdir.New(t)
			dirs, snaps := submitMany(t, root, queued)
			script := filepath.Join(testdir.New(t), "job.sh")
			if tc.script != "" {
				require.NoError(t, os.WriteFile(script, []byte(tc.script), tc.mode))
			}
			r := runCLI(t, "work", root, "--parallel", tc.parallel, "--", script)
			requireCode(t, r, tc.wantCode)
			requireErrorLine(t, r)
			require.Contains(t, r.stderr, script, "the command is named")
			for _, want := range tc.wantSaid {
				require.Contains(t, r.stderr, want)
			}
			requireFailedAndUntouched(t, dirs, snaps, tc.wantFailed)
			if tc.wantFailed == 1 {
				st := status(t, dirs[0])
				require.Contains(t, st.Error, "cannot run "+script)
				require.Nil(t, st.ExitCode, "the command never ran")
			}
		})
	}
}

// Jobs that all fail fast the same way (the command exits at once with one
// status: a typo in its arguments) stop the worker after --fail-fast of
// them in a row (default 5) instead of failing the whole queue. Slow
// failures (--fail-fast-within), failures with changing statuses, and
// --fail-fast 0 do not stop it. The window is wide (failFastWindow) where
// the jobs must count as fast, so that a loaded machine cannot make them
// slow; the default window is in the help text (TestHelp).
func TestWork_JobsThatFailFastStopTheWorker(t *testing.T) {
	const queued = 10
	const wide = "--fail-fast-within=" + failFastWindow
	alternate := `case $JOBSTORE_JOB_ID in *[02468]) exit 2;; *) exit 3;; esac`
	for _, tc := range []struct {
		name       string
		flags      []string
		script     string
		wantFailed int
		wantCode   int
		wantSaid   string
	}{
		{"default: five", []string{wide}, "exit 2", 5, exitBroken,
			"the last 5 jobs (j00 to j04) each failed within 1m0s of their start with exit status 2: sh -c exit 2 fails at once"},
		{"three", []string{wide, "--fail-fast", "3"}, "exit 2", 3, exitBroken, "the last 3 jobs (j00 to j02)"},
		{"one", []string{wide, "--fail-fast", "1"}, "exit 2", 1, exitBroken, "job j00 failed within 1m0s of their start with exit status 2"},
		{"never", []string{"--fail-fast", "0"}, "exit 2", queued, exitUnsuccessful, ""},
		{"slower than the window", []string{"--fail-fast-within", "1ns"}, "exit 2", queued, exitUnsuccessful, ""},
		{"changing statuses", []string{wide}, alternate, queued, exitUnsuccessful, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := testdir.New(t)
			dirs, snaps := submitMany(t, root, queued)
			args := append(append([]string{"work", root, "--until-empty"}, tc.flags...), "--", "sh", "-c", tc.script)
			r := runCLI(t, args...)
			requireCode(t, r, tc.wantCode)
			requireFailedAndUntouched(t, dirs, snaps, tc.wantFailed)
			if tc.wantCode == exitBroken {
				requireErrorLine(t, r)
				require.Contains(t, r.stderr, tc.wantSaid)
				require.Contains(t, r.stderr, "--fail-fast 0 turns this check off")
			} else {
				require.NotContains(t, r.stderr, "stopped taking jobs")
			}
		})
	}
}

// With several slots, the jobs already running when the worker stops go on
// to their end: at most parallel-1 more than --fail-fast fail, and the rest
// stay queued, untouched.
func TestWork_FailFastWithSlotsLeavesTheRestQueued(t *testing.T) {
	const queued, parallel, after = 20, 3, 5
	root := testdir.New(t)
	dirs, snaps := submitMany(t, root, queued)
	r := runCLI(t, "work", root, "--until-empty", "--fail-fast-within", failFastWindow, "--parallel", fmt.Sprint(parallel), "--", "sh", "-c", "exit 2")
	requireCode(t, r, exitBroken)
	failed := 0
	for _, dir := range dirs {
		if status(t, dir).State == jobstore.Failed {
			failed++
		}
	}
	require.GreaterOrEqual(t, failed, after, r.stderr)
	require.LessOrEqual(t, failed, after+parallel-1, r.stderr)
	requireFailedAndUntouched(t, dirs, snaps, failed)
	require.Equal(t, 1, strings.Count(r.stderr, "stopped taking jobs"), r.stderr)
	require.LessOrEqual(t, strings.Count(r.stderr, "taking no more jobs"), 1, r.stderr)
}
