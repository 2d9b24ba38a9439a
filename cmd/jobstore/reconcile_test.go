package main

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/clitest"
	"github.com/axqua/jobstore/internal/testdir"
	"github.com/stretchr/testify/require"
)

// staleAge makes a temp file older than the sweep threshold.
const staleAge = jobstore.DefaultSweepAge + time.Hour

func TestReconcile_MarksDeadRunnersLostSweepsStaleTempsLeavesTheRestAlone(t *testing.T) {
	root := testdir.New(t)

	// A runner that died: its status says running, nobody holds job.lock.
	dead := clitest.Submit(t, root, "dead-runner")
	started := jobstore.Now()
	require.NoError(t, jobstore.WriteStatus(dead, jobstore.JobStatus{State: jobstore.Running, Seq: 2,
		StartedAt: &started, PID: 999999, Host: "gone-host"}))

	// A live runner: this process holds the lock.
	live := clitest.Submit(t, root, "live-runner")
	run, err := jobstore.Start(live)
	require.NoError(t, err)
	t.Cleanup(func() { run.Close() })

	// A queued job with a stale temp file and a fresh one (a live writer's).
	waiting := clitest.Submit(t, root, "waiting")
	stale := filepath.Join(string(waiting), ".status.json123456")
	fresh := filepath.Join(string(waiting), ".status.json654321")
	for _, p := range []string{stale, fresh} {
		require.NoError(t, os.WriteFile(p, []byte("{"), 0o644))
	}
	old := time.Now().Add(-staleAge)
	require.NoError(t, os.Chtimes(stale, old, old))

	r := runCLI(t, "reconcile", root)
	requireCode(t, r, exitOK)
	require.Empty(t, r.stderr)
	require.Regexp(t, regexp.MustCompile(`(?m)^lost\s+dead-runner\s+.*pid 999999 on host "gone-host"`), r.stdout)
	require.Regexp(t, regexp.MustCompile(`(?m)^swept\s+waiting\s+\.status\.json123456$`), r.stdout)
	require.NotContains(t, r.stdout, "live-runner")
	require.NotContains(t, r.stdout, "654321")
	require.Contains(t, r.stdout, "3 jobs: 1 marked lost, 1 stale temp file removed, 0 could not be reconciled")

	st, err := jobstore.ReadStatus(dead)
	require.NoError(t, err)
	require.Equal(t, jobstore.Lost, st.State)
	st, err = jobstore.ReadStatus(live)
	require.NoError(t, err)
	require.Equal(t, jobstore.Running, st.State)
	require.NoFileExists(t, stale)
	require.FileExists(t, fresh)

	// Nothing left to do the second time.
	r = runCLI(t, "reconcile", root)
	requireCode(t, r, exitOK)
	require.Equal(t, "3 jobs: 0 marked lost, 0 stale temp files removed, 0 could not be reconciled\n", r.stdout)
}

// TestReconcile_WhatAnInterruptedSubmitLeftDoesNotFailItForever: an empty
// job directory (an older jobstore's Submit killed after its mkdir) and a
// hidden build directory (a crashed Submit's), both older than the sweep
// age, are removed; reconcile exits 0 the first time and every time after.
func TestReconcile_WhatAnInterruptedSubmitLeftDoesNotFailItForever(t *testing.T) {
	root := testdir.New(t)
	clitest.Submit(t, root, "fine")
	old := time.Now().Add(-staleAge)
	for _, name := range []string{"20261130T093540.123456Z-7k2m9xq4ab", ".submit/x-1"} {
		p := filepath.Join(root, name)
		require.NoError(t, os.Mkdir(p, 0o755))
		require.NoError(t, os.Chtimes(p, old, old))
	}
	for range 2 {
		r := runCLI(t, "reconcile", root)
		requireCode(t, r, exitOK)
		require.Equal(t, "1 job: 0 marked lost, 0 stale temp files removed, 0 could not be reconciled\n", r.stdout)
	}
	names, err := os.ReadDir(root)
	require.NoError(t, err)
	require.Len(t, names, 3, "only the job, the live index and .submit are left: %v", names)
	builds, err := os.ReadDir(filepath.Join(root, ".submit"))
	require.NoError(t, err)
	require.Empty(t, builds, "the build directory is removed")
}

func TestReconcile_AJobThatCannotBeReconciledExitsOne(t *testing.T) {
	root := testdir.New(t)
	clitest.Submit(t, root, "fine")
	broken := clitest.Submit(t, root, "broken")
	require.NoError(t, os.WriteFile(broken.StatusPath(), []byte{0, 0, 0, 0}, 0o644))
	r := runCLI(t, "reconcile", root)
	requireCode(t, r, exitUnsuccessful)
	require.Regexp(t, regexp.MustCompile(`(?m)^error\s+broken\s+jobstore: .*NUL bytes.*Remedy: `), r.stdout)
	require.Contains(t, r.stdout, "1 could not be reconciled")
}
