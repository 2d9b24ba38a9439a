package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/clitest"
	"github.com/axqua/jobstore/internal/testdir"
)

// finishedAgo writes a job that finished (state) ago.
func finishedAgo(t *testing.T, root, id string, state jobstore.State, ago time.Duration) jobstore.JobDir {
	t.Helper()
	dir := clitest.Submit(t, root, id)
	at := time.Now().Add(-ago)
	require.NoError(t, jobstore.WriteStatus(dir, jobstore.JobStatus{State: state, Seq: 2, UpdatedAt: at, FinishedAt: &at}))
	return dir
}

func TestRm_RemovesFinishedJobsAndRefusesTheOthers(t *testing.T) {
	root := testdir.New(t)
	done := clitest.RunJob(t, root, "done", jobstore.Outcome{State: jobstore.Succeeded})
	cancelled := clitest.Submit(t, root, "cancelled")
	require.NoError(t, jobstore.RequestCancel(cancelled, jobstore.CancelRequest{RequestedBy: "test"})) // read-only cancel.json
	queued := clitest.Submit(t, root, "queued")

	r := runCLI(t, "rm", string(done), string(cancelled), string(queued))
	requireCode(t, r, exitUnsuccessful)
	require.Empty(t, r.stderr)
	require.Regexp(t, regexp.MustCompile(`(?m)^removed\s+done\s+succeeded, finished \d{4}-`), r.stdout)
	require.Regexp(t, regexp.MustCompile(`(?m)^removed\s+cancelled\s+cancelled, finished `), r.stdout)
	require.Regexp(t, regexp.MustCompile(`(?m)^refused\s+queued\s+jobstore: remove .*the job is queued; only a finished job is removed\. Remedy: cancel it first \('jobstore cancel .*queued'\), then remove it$`), r.stdout)
	require.Contains(t, r.stdout, "removed 2 jobs, 1 refused\n")
	require.NoDirExists(t, string(done))
	require.NoDirExists(t, string(cancelled))
	require.DirExists(t, string(queued))
	require.Equal(t, []string{jobstore.LiveDir, ".submit", "queued"}, dirNames(t, root), "nothing hidden left behind but the live index and where Submit builds")
	require.Equal(t, []string{"queued"}, dirNames(t, filepath.Join(root, jobstore.LiveDir)), "the removed jobs left the live index")

	r = runCLI(t, "rm", filepath.Join(root, "no-such-job"))
	requireCode(t, r, exitRuntime)
	require.Regexp(t, regexp.MustCompile(`(?m)^error\s+no-such-job\s+jobstore: .*Remedy: give a job directory`), r.stdout)
}

func TestRm_DryRunRemovesNothing(t *testing.T) {
	root := testdir.New(t)
	done := clitest.RunJob(t, root, "done", jobstore.Outcome{State: jobstore.Failed})
	running := clitest.Submit(t, root, "running")
	run, err := jobstore.Start(running)
	require.NoError(t, err)
	t.Cleanup(func() { run.Close() })
	before := snapshotTree(t, root)

	r := runCLI(t, "rm", "--dry-run", string(done), string(running))
	requireCode(t, r, exitUnsuccessful)
	require.Regexp(t, regexp.MustCompile(`(?m)^would remove\s+done\s+failed, finished `), r.stdout)
	require.Regexp(t, regexp.MustCompile(`(?m)^refused\s+running\s+.*the job is running.*Remedy: wait for it to end \('jobstore watch `), r.stdout)
	require.Contains(t, r.stdout, "would remove 1 job, 1 refused; nothing was removed (dry run)\n")
	require.Equal(t, before, snapshotTree(t, root), "a dry run changes nothing")

	r = runCLI(t, "rm", "--dry-run", "--json", string(done))
	requireCode(t, r, exitOK)
	var out removeJSON
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out))
	require.True(t, out.DryRun)
	require.Equal(t, 1, out.WouldRemove)
	require.Equal(t, outcomeWouldRemove, out.Jobs[0].Outcome)
	require.DirExists(t, string(done))
}

func TestRm_JSON(t *testing.T) {
	root := testdir.New(t)
	done := clitest.RunJob(t, root, "done", jobstore.Outcome{State: jobstore.Succeeded})
	queued := clitest.Submit(t, root, "queued")
	r := runCLI(t, "rm", "--json", string(done), string(queued), filepath.Join(root, "missing"))
	requireCode(t, r, exitRuntime)
	require.Empty(t, r.stderr)
	require.Equal(t, 2, requireErrorObjects(t, r.stdout))
	var out removeJSON
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out))
	require.Equal(t, removeJSON{DryRun: false, Removed: 1, Refused: 1, Failed: 1}, removeJSON{DryRun: out.DryRun, Removed: out.Removed, Refused: out.Refused, Failed: out.Failed})
	require.Len(t, out.Jobs, 3)
	require.Equal(t, outcomeRemoved, out.Jobs[0].Outcome)
	require.Equal(t, "succeeded", *out.Jobs[0].State)
	require.NotNil(t, out.Jobs[0].FinishedAt)
	require.Nil(t, out.Jobs[0].Error)
	require.Equal(t, outcomeRefused, out.Jobs[1].Outcome)
	require.Equal(t, "wrong_state", out.Jobs[1].Error.Kind)
	require.Equal(t, "state", out.Jobs[1].Error.Subject)
	require.Equal(t, outcomeFailed, out.Jobs[2].Outcome)
	require.Equal(t, "not_job", out.Jobs[2].Error.Kind)
	require.Nil(t, out.Jobs[2].State)
}

func TestPrune_RemovesOldFinishedJobsAndKeepsTheIndexTrue(t *testing.T) {
	root := testdir.New(t)
	finishedAgo(t, root, "old", jobstore.Succeeded, 40*24*time.Hour)
	finishedAgo(t, root, "old-failed", jobstore.Failed, 31*24*time.Hour)
	finishedAgo(t, root, "young", jobstore.Succeeded, 2*24*time.Hour)
	clitest.Submit(t, root, "queued")
	r := runCLI(t, "list", root, "--rebuild")
	requireCode(t, r, exitOK)

	before := snapshotTree(t, root)
	r = runCLI(t, "prune", root, "--older-than", "30d", "--dry-run")
	requireCode(t, r, exitOK)
	require.Regexp(t, regexp.MustCompile(`(?m)^would remove\s+old\s+succeeded, finished `), r.stdout)
	require.Regexp(t, regexp.MustCompile(`(?m)^would remove\s+old-failed\s+failed, finished `), r.stdout)
	require.NotContains(t, r.stdout, "young")
	require.Contains(t, r.stdout, "would remove 2 jobs finished before ")
	require.Contains(t, r.stdout, "; nothing was removed (dry run)\n")
	require.Equal(t, before, snapshotTree(t, root), "a dry run changes nothing")

	r = runCLI(t, "prune", root, "--older-than", "30d", "--json")
	requireCode(t, r, exitOK)
	var out removeJSON
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out))
	require.Equal(t, "720h0m0s", out.OlderThan)
	require.Equal(t, 2, out.Removed)
	require.ElementsMatch(t, []string{"old", "old-failed"}, []string{out.Jobs[0].ID, out.Jobs[1].ID})
	require.Equal(t, "succeeded", *out.Jobs[0].State)
	require.Equal(t, []string{jobstore.LiveDir, ".submit", jobstore.IndexFile, "queued", "young"}, dirNames(t, root))
	require.NotContains(t, dirNames(t, filepath.Join(root, jobstore.LiveDir)), "old", "a pruned job leaves the live index")
	idx, err := jobstore.ReadIndex(root)
	require.NoError(t, err)
	var rows []string
	for _, row := range idx.Jobs {
		rows = append(rows, row.ID)
	}
	require.ElementsMatch(t, []string{"queued", "young"}, rows, "the index holds the jobs left")

	r = runCLI(t, "prune", root, "--older-than", "1d")
	requireCode(t, r, exitOK)
	require.Regexp(t, regexp.MustCompile(`(?m)^removed\s+young\s+succeeded, finished `), r.stdout)
	require.Contains(t, r.stdout, "removed 1 job finished before ")
}

func TestPrune_AJobAProcessHoldsIsRefusedAndExitsOne(t *testing.T) {
	root := testdir.New(t)
	finishedAgo(t, root, "a", jobstore.Succeeded, time.Hour)
	held := finishedAgo(t, root, "held", jobstore.Succeeded, time.Hour)
	lk, err := jobstore.LockJob(held) // this process; the command is another
	require.NoError(t, err)
	t.Cleanup(func() { lk.Unlock() })
	r := runCLI(t, "prune", root, "--older-than", "0")
	requireCode(t, r, exitUnsuccessful)
	require.Regexp(t, regexp.MustCompile(`(?m)^removed\s+a\s`), r.stdout)
	require.Regexp(t, regexp.MustCompile(`(?m)^refused\s+held\s+jobstore: remove .*held by pid .*Remedy: `), r.stdout)
	require.Contains(t, r.stdout, "removed 1 job finished before ")
	require.Contains(t, r.stdout, ", 1 refused\n")
	require.DirExists(t, string(held))
}

func TestPrune_UsageAndRootErrors(t *testing.T) {
	root := testdir.New(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"prune", root}, "--older-than is required"},
		{[]string{"prune", root, "--older-than", "-3d"}, "is negative"},
		{[]string{"prune", root, "--older-than", "-1h"}, "is negative"},
		{[]string{"prune", root, "--older-than", "soon"}, "is not a duration"},
		{[]string{"prune", "--older-than", "1d"}, "missing ROOT"},
		{[]string{"rm"}, "missing DIR"},
	} {
		r := runCLI(t, tc.args...)
		requireCode(t, r, exitUsage)
		requireErrorLine(t, r)
		require.Contains(t, r.stderr, tc.want)
		require.Empty(t, r.stdout)
	}
	home := testdir.New(t) // holds something, but no job: a mistyped path
	require.NoError(t, os.WriteFile(filepath.Join(home, "notes.txt"), nil, 0o644))
	r := runCLI(t, "prune", home, "--older-than", "0")
	requireCode(t, r, exitRuntime)
	requireErrorLine(t, r)
	require.Contains(t, r.stderr, "holds no jobs")
	require.FileExists(t, filepath.Join(home, "notes.txt"))
}

func TestParseAge_DaysAndGoDurations(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
	}{
		{"0", 0},
		{"0d", 0},
		{"30d", 30 * 24 * time.Hour},
		{"1.5d", 36 * time.Hour},
		{"2d12h", 60 * time.Hour},
		{"36h", 36 * time.Hour},
		{"90m", 90 * time.Minute},
		{"1d30m", 24*time.Hour + 30*time.Minute},
	} {
		got, err := parseAge(tc.in)
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.want, got, tc.in)
	}
	for _, bad := range []string{"", "d", "-1d", "-5m", "1d-5m", "3 days", "1e400d", "200000d", "106000d100000h"} {
		_, err := parseAge(bad)
		require.Error(t, err, "%q", bad)
	}
}

// snapshotTree is every path under root with its size, mode and mtime.
func snapshotTree(t *testing.T, root string) map[string]string {
	t.Helper()
	m := map[string]string{}
	require.NoError(t, filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		m[p] = fmt.Sprint(fi.Mode(), fi.ModTime(), fi.Size())
		return nil
	}))
	return m
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out []string
	for _, de := range des {
		out = append(out, de.Name())
	}
	return out
}

func TestPrune_AnIndexItCannotUpdateExitsThree(t *testing.T) {
	root := testdir.New(t)
	finishedAgo(t, root, "a", jobstore.Succeeded, time.Hour)
	require.NoError(t, os.WriteFile(filepath.Join(root, jobstore.IndexFile), []byte("{not json"), 0o644))
	r := runCLI(t, "prune", root, "--older-than", "0")
	requireCode(t, r, exitRuntime)
	requireErrorLine(t, r)
	require.Contains(t, r.stderr, jobstore.IndexFile)
	require.Regexp(t, regexp.MustCompile(`(?m)^removed\s+a\s`), r.stdout, "what was removed is still said")
}

// TestPrune_AJobThatFinishedMeanwhileSaysWhyItsStateIsUnknown: prune reads
// each job's status before Prune reads it again (by a later cutoff) and
// removes it. A job removed by Prune is printed with its state and finish
// as read before when they were final; otherwise its line says why they
// are unknown, never a bare "removed ID".
func TestPrune_AJobThatFinishedMeanwhileSaysWhyItsStateIsUnknown(t *testing.T) {
	finished := time.Date(2026, 11, 30, 9, 35, 40, 0, time.UTC)
	for _, tc := range []struct {
		name   string
		before statusBefore
		want   string
	}{
		{"final when read", statusBefore{read: true, st: &jobstore.JobStatus{State: jobstore.Succeeded, FinishedAt: &finished}},
			"succeeded, finished 2026-11-30T09:35:40Z"},
		{"running when read", statusBefore{read: true, st: &jobstore.JobStatus{State: jobstore.Running}},
			"state unknown: it was running when prune read it, and finished before Prune read it"},
		{"no status when read", statusBefore{read: true},
			"state unknown: it had no status when prune read it"},
		{"unreadable when read", statusBefore{read: true, err: &jobstore.Error{Sentinel: jobstore.ErrCorrupt, Msg: "torn"}},
			"state unknown: its status could not be read before Prune read it (torn"},
		{"not listed", statusBefore{},
			"state unknown: it appeared after prune listed ROOT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := removeJSON{Root: "/r", Jobs: []removeJobJSON{}}
			out.addPruned(jobstore.JobDir("/r/j"), tc.before)
			require.Equal(t, 1, out.Removed)
			var b strings.Builder
			require.NoError(t, printRemoval(&env{stdout: &b}, false, out, ""))
			line := strings.SplitN(b.String(), "\n", 2)[0]
			require.Regexp(t, `^removed\s+j\s+`+regexp.QuoteMeta(tc.want), line)

			b.Reset()
			require.NoError(t, printRemoval(&env{stdout: &b}, true, out, ""))
			var got removeJSON
			require.NoError(t, json.Unmarshal([]byte(b.String()), &got))
			require.Equal(t, tc.before.final() == nil, got.Jobs[0].State == nil, "state is null exactly when unknown")
		})
	}
}
