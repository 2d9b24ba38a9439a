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

	"github.com/stretchr/testify/require"

	"github.com/axqua/jobstore"
)

// The remover kill test's knobs: removeKillJobs finished jobs, removed by
// child processes killed removeKillMinDelay..removeKillMaxDelay after they
// say they are ready (a removal takes about a millisecond here), at most
// removeKillRounds times.
const (
	removeKillJobs     = 150
	removeKillRounds   = 60
	removeKillMinDelay = 200 * time.Microsecond
	removeKillMaxDelay = 5 * time.Millisecond
	removerRole        = "remover"
	removerJobsEnv     = "JOBSTORE_REMOVE_JOBS"
)

func init() { roles[removerRole] = remover }

// remover is the child: it removes each job of $JOBSTORE_REMOVE_JOBS
// (space-separated directories) in turn, printing "removed <id>" once
// Remove has returned nil, until it is killed.
func remover() int {
	fmt.Println(killWriterReadyLine)
	for _, d := range strings.Fields(os.Getenv(removerJobsEnv)) {
		if err := jobstore.Remove(jobstore.JobDir(d)); err != nil {
			fmt.Println("error", filepath.Base(d), strings.ReplaceAll(err.Error(), "\n", " "))
			return 1
		}
		fmt.Println("removed", filepath.Base(d))
	}
	fmt.Println("done")
	return 0
}

// runKilledRemover starts a remover of dirs, kills it at a random instant
// after it said it was ready, and returns the jobs it said it removed.
func runKilledRemover(t *testing.T, dirs []string) []string {
	t.Helper()
	cmd := childCommand(t, removerRole, removerJobsEnv+"="+strings.Join(dirs, " "))
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	startChild(t, cmd)
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	require.Equal(t, killWriterReadyLine, <-lines)
	time.Sleep(removeKillMinDelay + rand.N(removeKillMaxDelay-removeKillMinDelay+1))
	require.NoError(t, cmd.Process.Kill())
	var removed []string
	for line := range lines { // until EOF: the child is dead
		verb, id, _ := strings.Cut(line, " ")
		switch verb {
		case "removed":
			removed = append(removed, id)
		case "done":
		default:
			t.Errorf("remover: %s", line)
		}
	}
	_ = cmd.Wait()
	return removed
}

// Removers killed at random instants leave every job whole or gone: a job
// still in the root reads whole and finished (and the next Remove passes
// the killed remover's claim at once, on this host); a removal cut short
// after its rename leaves a hidden directory that no reader takes for a
// job, which Prune leaves alone while it is young (a Remove at work) and
// deletes once nothing in it has changed for DefaultSweepAge.
func TestRemove_RemoverKilledAtAnyInstantLeavesJobsWholeOrGone(t *testing.T) {
	root := tempDir(t)
	var left []string
	for i := range removeKillJobs {
		left = append(left, string(finishedLike(t, root, fmt.Sprintf("j%03d", i))))
	}
	var kills, cutMidway, claimsLeft int
	hidden := map[string]bool{}
	for round := 1; round <= removeKillRounds && len(left) > 0; round++ {
		removed := runKilledRemover(t, left)
		kills++
		for _, id := range removed {
			require.NoDirExists(t, filepath.Join(root, id), "round %d: %s was acknowledged removed", round, id)
		}
		var still []string
		newHidden := 0
		for _, name := range names(t, root) {
			switch {
			case strings.HasPrefix(name, ".remove-"):
				if !hidden[name] {
					hidden[name] = true
					newHidden++
				}
			case strings.HasPrefix(name, "."):
				t.Fatalf("round %d: unexpected hidden entry %s in the root", round, name)
			default:
				dir := jobstore.JobDir(filepath.Join(root, name))
				_, err := jobstore.ReadSpec(dir)
				require.NoError(t, err, "round %d: job %s is in the root but not whole", round, name)
				require.Equal(t, jobstore.Succeeded, readStatus(t, dir).State, "round %d: job %s", round, name)
				if _, err := os.Stat(jobstore.RunDirPath(dir, 2)); err == nil {
					claimsLeft++ // killed between its claim and its rename
				}
				still = append(still, string(dir))
			}
		}
		require.LessOrEqual(t, newHidden, 1, "round %d: one kill cut %d removals short", round, newHidden)
		cutMidway += newHidden
		left = still
	}
	for _, d := range left { // the rest, past the killed removers' claims
		require.NoError(t, jobstore.Remove(jobstore.JobDir(d)))
	}
	t.Logf("%d kills: %d cut a removal short after its rename, %d left a claim on a job still whole", kills, cutMidway, claimsLeft)
	require.Positive(t, cutMidway+claimsLeft, "no kill landed inside a removal: the test proved nothing")

	var leftovers []string
	for name := range hidden {
		if _, err := os.Lstat(filepath.Join(root, name)); err == nil {
			leftovers = append(leftovers, name)
		}
	}
	_, err := jobstore.Prune(root, 0)
	require.NoError(t, err)
	for _, name := range leftovers {
		require.DirExists(t, filepath.Join(root, name), "a young leftover may be a Remove at work: Prune must leave it")
		age(t, filepath.Join(root, name), jobstore.DefaultSweepAge+time.Minute)
	}
	_, err = jobstore.Prune(root, 0)
	require.NoError(t, err)
	require.Empty(t, names(t, root), "Prune must delete what the killed removers left")
}

// finishedLike writes a job as a runner that finished attempt 1 leaves it
// (job.json, status.json succeeded at attempt 1, an empty job.lock, the
// attempt directory with its lease, a read-only cancel.json), without the
// runner's fsyncs: a fixture of many jobs.
func finishedLike(t *testing.T, root, id string) jobstore.JobDir {
	t.Helper()
	st := statusIn(jobstore.Succeeded, 3)
	st.Attempt = 1
	dir := writeJob(t, root, specAt(id, 0), st)
	writeFile(t, dir.LockPath(), nil)
	require.NoError(t, os.Mkdir(jobstore.RunDirPath(dir, 1), 0o755))
	writeFile(t, filepath.Join(jobstore.RunDirPath(dir, 1), jobstore.LeaseName), []byte("7\n"))
	writeRecord(t, dir.CancelPath(), jobstore.CancelRequest{SchemaVersion: jobstore.CancelSchemaVersion, JobID: id, RequestedAt: submitted})
	require.NoError(t, os.Chmod(dir.CancelPath(), 0o444))
	require.NoError(t, os.Chmod(dir.SpecPath(), 0o444))
	return dir
}

// age sets the modification time of dir and of everything in it to age
// ago, as if nothing had touched them since.
func age(t *testing.T, dir string, age time.Duration) {
	t.Helper()
	when := time.Now().Add(-age)
	var paths []string
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		paths = append(paths, p)
		return err
	}))
	for i := len(paths) - 1; i >= 0; i-- { // children first: changing them moves nothing above
		require.NoError(t, os.Chtimes(paths[i], when, when))
	}
}
