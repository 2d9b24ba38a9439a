package jobstore_test

import (
	"bufio"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/axqua/jobstore"
)

// A job appears whole (job.json and the queued status.json) or not at all,
// whenever its submitter dies or the disk fills.

const (
	submitKillRounds    = 100
	submitKillerRole    = "kill-submitter"
	submitKillerRootEnv = "JOBSTORE_KILL_ROOT"
)

// killSubmitter is the child: it submits jobs as fast as it can, printing
// each ID once Submit has returned it, until it is killed.
func killSubmitter() int {
	root := os.Getenv(submitKillerRootEnv)
	fmt.Println(killWriterReadyLine)
	for {
		dir, err := jobstore.Submit(root, jobstore.JobSpec{Kind: "kill-test", Params: []byte(`{"frames": 48}`)})
		if err != nil {
			fmt.Printf("error: %v\n", err)
			return 1
		}
		fmt.Println(dir.ID())
	}
}

func init() { roles[submitKillerRole] = killSubmitter }

// firstAckWait bounds how long runKilledSubmitter waits for the first
// acknowledgement.
const firstAckWait = 30 * time.Second

// runKilledSubmitter starts a submitter (the child role) under root, kills it
// killMinDelay..killMaxDelay after it said it was ready, and returns the IDs
// it acknowledged. With firstAck the delay starts once the submitter
// acknowledged its first ID instead, so that the round has acknowledged jobs
// to check however slow its writes are (Wine).
func runKilledSubmitter(t *testing.T, role, root string, firstAck bool) []string {
	t.Helper()
	cmd := childCommand(t, role, submitKillerRootEnv+"="+root)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	startChild(t, cmd)
	sc := bufio.NewScanner(out)
	require.True(t, sc.Scan(), "the submitter said nothing")
	require.Equal(t, killWriterReadyLine, sc.Text())
	acked := make(chan []string, 1)
	first := make(chan struct{})
	go func() {
		var ids []string
		for sc.Scan() {
			if ids = append(ids, sc.Text()); len(ids) == 1 {
				close(first)
			}
		}
		acked <- ids
	}()
	if firstAck {
		select {
		case <-first:
		case <-time.After(firstAckWait):
			_ = cmd.Process.Kill()
			t.Fatalf("the submitter acknowledged no job within %v", firstAckWait)
		}
	}
	time.Sleep(killMinDelay + rand.N(killMaxDelay-killMinDelay+1))
	require.NoError(t, cmd.Process.Kill())
	ids := <-acked
	_ = cmd.Wait()
	for _, id := range ids {
		require.NoError(t, jobstore.ValidateJobID(id), "the submitter reported an error: %s", id)
	}
	return ids
}

// requireWholeJobs checks every job under root as List and ReconcileAll
// see it: each has job.json and its first status (queued, seq 1), and is
// readable; every ID in want is among them. It returns the number of jobs.
func requireWholeJobs(t *testing.T, root string, want []string) int {
	t.Helper()
	n := requireWholeList(t, root, want)
	results, err := jobstore.ReconcileAll(root)
	require.NoError(t, err)
	require.Len(t, results, n, "ReconcileAll sees the jobs List sees")
	for _, r := range results {
		require.NoError(t, r.Err, "reconcile %s", r.Dir)
		require.False(t, r.Changed)
	}
	return n
}

// requireWholeList is the List half of requireWholeJobs.
func requireWholeList(t *testing.T, root string, want []string) int {
	t.Helper()
	entries, err := jobstore.List(root)
	require.NoError(t, err)
	seen := map[string]bool{}
	for _, e := range entries {
		require.NoError(t, e.Err, "a half-made job: %s", e.Dir)
		require.NotNil(t, e.Spec, "no job.json in %s", e.Dir)
		require.NotNil(t, e.Status, "no status.json in %s", e.Dir)
		require.Equal(t, jobstore.Queued, e.Status.State)
		require.Equal(t, uint64(1), e.Status.Seq)
		seen[e.Dir.ID()] = true
	}
	for _, id := range want {
		require.True(t, seen[id], "acknowledged job %s is missing", id)
	}
	return len(entries)
}

// hiddenDirs lists what a Submit may leave under root: the directories
// whose names start with '.', but for .submit, and the entries of .submit
// (as ".submit/name").
func hiddenDirs(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	for _, name := range names(t, root) {
		fi, err := os.Lstat(filepath.Join(root, name))
		switch {
		case err != nil || !fi.IsDir() || !strings.HasPrefix(name, "."):
		case name == ".submit":
			for _, inner := range names(t, filepath.Join(root, name)) {
				out = append(out, filepath.Join(name, inner))
			}
		default:
			out = append(out, name)
		}
	}
	return out
}

// ageTree sets the modification time of root's hidden entries, and of
// everything in them, to age ago: what a sweep sees once they are that old.
func ageTree(t *testing.T, root string, age time.Duration) {
	t.Helper()
	when := time.Now().Add(-age)
	for _, name := range names(t, root) {
		if !strings.HasPrefix(name, ".") {
			continue
		}
		require.NoError(t, filepath.WalkDir(filepath.Join(root, name), func(p string, _ fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			return os.Chtimes(p, when, when)
		}))
	}
}

// TestSubmit_KilledAtAnyInstantLeavesWholeJobsOnly kills a process that
// submits jobs as fast as it can, at random instants, submitKillRounds
// times. After every kill, every job under the root is whole (job.json and
// status.json queued) and readable by List (and, every tenth kill, by
// ReconcileAll and RebuildIndex: what a kill leaves stays, so a later look
// finds it), every acknowledged job is there, and at most one hidden build
// directory was left per kill. Once those are older than DefaultSweepAge,
// ReconcileAll removes them and leaves the jobs alone.
func TestSubmit_KilledAtAnyInstantLeavesWholeJobsOnly(t *testing.T) {
	root := filepath.Join(tempDir(t), "jobs")
	require.NoError(t, os.Mkdir(root, 0o755))
	var acked []string
	leftovers, jobs := 0, 0
	for round := 1; round <= submitKillRounds; round++ {
		// The last round is killed only after a submit was acknowledged: on
		// a slow machine every other kill may come before the first.
		acked = append(acked, runKilledSubmitter(t, submitKillerRole, root, round == submitKillRounds)...)
		jobs = requireWholeList(t, root, acked)
		if round%10 == 0 {
			requireWholeJobs(t, root, acked)
			idx, err := jobstore.RebuildIndex(root)
			require.NoError(t, err)
			require.Empty(t, idx.Unreadable, "round %d", round)
			require.Len(t, idx.Jobs, jobs, "round %d", round)
		}
		hidden := hiddenDirs(t, root)
		require.LessOrEqual(t, len(hidden), leftovers+1, "round %d: one kill left more than one build directory: %v", round, hidden)
		leftovers = len(hidden)
	}
	require.NotEmpty(t, acked, "no submit was acknowledged before a kill")
	t.Logf("%d kills: %d jobs acknowledged, %d whole jobs in all, %d kills left a hidden build directory",
		submitKillRounds, len(acked), jobs, leftovers)

	ageTree(t, root, 2*jobstore.DefaultSweepAge)
	requireWholeJobs(t, root, acked)
	assert.Empty(t, hiddenDirs(t, root), "ReconcileAll removes the old build directories")
	requireNoTempFiles(t, root)
}
