package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/internal/testdir"
	"github.com/stretchr/testify/require"
)

// The demo runs for demoSteps*demoStepEvery (3 s) plus at most one poll:
// under 10 s by construction. The tests check what it does, not how fast.
func TestDemo_RunsAJobToTheEndAndExitsZero(t *testing.T) {
	t.Parallel()
	root := testdir.New(t)
	r := runCLI(t, "demo", root)
	requireCode(t, r, exitOK)
	require.Empty(t, r.stderr)

	out := r.stdout
	for _, want := range []string{
		"jobstore demo, in " + root,
		"1. submit", "2. run", "3. list", "4. show",
		"state        succeeded",
		"message      rendered 30 frames",
		"progress     100%",
	} {
		require.Contains(t, out, want)
	}
	// The watcher polls at 1 Hz during 3 s of running: it draws the job running.
	require.Regexp(t, regexp.MustCompile(`(?m)^running\s+\[#*-*\]\s+\d+%\s+seq \d+\s+frame \d+/30$`), out)
	require.Regexp(t, regexp.MustCompile(`(?m)^job \S+ succeeded after \S+ \(exit code 0\): rendered 30 frames$`), out)
	require.Regexp(t, regexp.MustCompile(`(?m)^\S+\s+demo\.render\s+succeeded\s+100%`), out, "the list table")

	entries, err := jobstore.List(root)
	require.NoError(t, err)
	require.Len(t, entries, 1)
	st := entries[0].Status
	require.Equal(t, jobstore.Succeeded, st.State)
	require.EqualValues(t, 1+demoSteps+1+1, st.Seq, "queued, running, one per step, succeeded")

	requireCode(t, runCLI(t, "check", root), exitOK)
}

func TestDemo_FailShowsTheErrorAndRemedyAndStillExitsZero(t *testing.T) {
	t.Parallel()
	root := testdir.New(t)
	r := runCLI(t, "demo", root, "--fail")
	requireCode(t, r, exitOK)
	require.Regexp(t, regexp.MustCompile(`(?m)^job \S+ failed after \S+ \(exit code 2\): frame 16: no space left on device \(simulated\)\. Remedy: free some disk space`), r.stdout)
	require.Contains(t, r.stdout, "state        failed")
	require.Contains(t, r.stdout, "remedy       free some disk space")
}

// Without ROOT the demo makes a fresh temporary directory, says where, and
// leaves it for the user to look at.
func TestDemo_WithoutRootUsesAFreshTempDirAndSaysWhere(t *testing.T) {
	t.Parallel()
	tmp := testdir.New(t)
	r := runCLIEnv(t, []string{"TMPDIR=" + tmp, "TMP=" + tmp, "TEMP=" + tmp}, "demo")
	requireCode(t, r, exitOK)
	m := regexp.MustCompile(`in a fresh temporary directory: (\S+)\n`).FindStringSubmatch(r.stdout)
	require.NotNil(t, m, r.stdout)
	root := m[1]
	require.True(t, strings.HasPrefix(root, tmp), "%s is not under %s", root, tmp)
	ents, err := os.ReadDir(root)
	require.NoError(t, err)
	require.Len(t, ents, 1)
	st, err := jobstore.ReadStatus(jobstore.JobDir(filepath.Join(root, ents[0].Name())))
	require.NoError(t, err)
	require.Equal(t, jobstore.Succeeded, st.State)
}
