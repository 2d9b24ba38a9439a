package main

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/internal/testdir"
	"github.com/stretchr/testify/require"
)

// The demo runs for about demoFrames*demoTiles*demoTileEvery (2 s). The
// tests check what it does, not how fast.
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
		"message      rendered 20 frames",
		"progress     100%",
	} {
		require.Contains(t, out, want)
	}
	// The watcher draws the job running, with a tile's progress.
	require.Regexp(t, regexp.MustCompile(`(?m)^running\s+\[#*-*\]\s+\d+%\s+seq \d+\s+frame \d+/20, tile \d+/1000$`), out)
	require.Regexp(t, regexp.MustCompile(`(?m)^job \S+ succeeded after \S+ \(exit code 0\): rendered 20 frames$`), out)
	require.Regexp(t, regexp.MustCompile(`(?m)^\S+\s+demo\.render\s+succeeded\s+100%`), out, "the list table")

	entries, err := jobstore.List(root)
	require.NoError(t, err)
	require.Len(t, entries, 1)
	st := entries[0].Status
	require.Equal(t, jobstore.Succeeded, st.State)
	calls, writes := requireCallsAndWrites(t, out, st)
	require.Equal(t, demoFrames*demoTiles, calls, "a Progress call per tile")
	// Coalesced: a write per 100 ms at most, over a run of seconds. Even a
	// run slowed tenfold writes far fewer times than it reports.
	require.Less(t, writes, calls/10, "progress is coalesced")

	requireCode(t, runCLI(t, "check", root), exitOK)
}

// requireCallsAndWrites reads the demo's count of Progress calls and status
// writes, checks the writes against the final status's seq and the
// breakdown it prints, and returns both.
func requireCallsAndWrites(t *testing.T, out string, st *jobstore.JobStatus) (calls, writes int) {
	t.Helper()
	m := regexp.MustCompile(`The runner called Progress (\d+) times; status.json was written (\d+) times \(seq (\d+):\s+queued, running, (\d+) progress writes, (\w+)\)\. A write per call would have been (\d+) writes\.`).FindStringSubmatch(out)
	require.NotNil(t, m, "no count of calls and writes in:\n%s", out)
	n := func(s string) int {
		v, err := strconv.Atoi(s)
		require.NoError(t, err)
		return v
	}
	calls, writes = n(m[1]), n(m[2])
	require.EqualValues(t, st.Seq, writes, "status.json's seq counts its writes")
	require.Equal(t, writes, n(m[3]))
	require.Equal(t, writes-3, n(m[4]))
	require.Positive(t, n(m[4]), "some progress was written before the end")
	require.Equal(t, string(st.State), m[5])
	require.Equal(t, calls+3, n(m[6]))
	return calls, writes
}

func TestDemo_FailShowsTheErrorAndRemedyAndStillExitsZero(t *testing.T) {
	t.Parallel()
	root := testdir.New(t)
	r := runCLI(t, "demo", root, "--fail")
	requireCode(t, r, exitOK)
	require.Regexp(t, regexp.MustCompile(`(?m)^job \S+ failed after \S+ \(exit code 2\): frame 11: no space left on device \(simulated\)\. Remedy: free some disk space`), r.stdout)
	require.Contains(t, r.stdout, "state        failed")
	require.Contains(t, r.stdout, "remedy       free some disk space")
	require.Contains(t, r.stdout, "progress     50%", "the failed record carries the last progress reported")
	entries, err := jobstore.List(root)
	require.NoError(t, err)
	require.Len(t, entries, 1)
	calls, _ := requireCallsAndWrites(t, r.stdout, entries[0].Status)
	require.Equal(t, demoFrames*demoTiles/2, calls)
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
	jobs, err := jobstore.List(root)
	require.NoError(t, err)
	require.Len(t, jobs, 1)
	st, err := jobstore.ReadStatus(jobs[0].Dir)
	require.NoError(t, err)
	require.Equal(t, jobstore.Succeeded, st.State)
}
