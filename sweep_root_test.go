package jobstore_test

import (
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// agePath sets path's modification time to age ago.
func agePath(t *testing.T, path string, age time.Duration) {
	t.Helper()
	when := time.Now().Add(-age)
	require.NoError(t, os.Chtimes(path, when, when))
}

// buildDir makes a build directory of an interrupted Submit under root:
// name, holding files, all modified age ago.
func buildDir(t *testing.T, root, name string, age time.Duration, files ...string) string {
	t.Helper()
	p := filepath.Join(root, name)
	require.NoError(t, os.Mkdir(p, 0o755))
	for _, f := range files {
		tempFile(t, p, f, age)
	}
	agePath(t, p, age)
	return p
}

// TestReconcileAll_RemovesWhatInterruptedSubmitsLeft: build directories
// older than DefaultSweepAge, the directories a crashed sweeper was
// emptying, and (in a root that holds jobs) the job directories an older
// jobstore's interrupted WriteSpec left (empty, or holding only its old
// temp file). Everything younger, and everything that is not one of those,
// stays; a second run finds nothing to do and exits clean.
func TestReconcileAll_RemovesWhatInterruptedSubmitsLeft(t *testing.T) {
	root := tempDir(t)
	requireLeftoversRemoved(t, root, root)
}

// requireLeftoversRemoved runs TestReconcileAll_RemovesWhatInterruptedSubmitsLeft
// on root, whose real directory (root, or where a link leads) is real.
func requireLeftoversRemoved(t *testing.T, root, real string) {
	t.Helper()
	old := 2 * jobstore.DefaultSweepAge
	_, err := jobstore.Submit(root, jobstore.JobSpec{ID: "a-job", Kind: "test"})
	require.NoError(t, err)
	gone := []string{
		buildDir(t, real, "old-empty", old),
		buildDir(t, real, "old-temp", old, ".job.json123"),
		buildDir(t, real, ".submit/b-1", old, jobstore.SpecFile, jobstore.StatusFile, ".status.json5"),
		buildDir(t, real, ".submit/c-2", old),
		buildDir(t, real, ".submit/.swept-3", 0, jobstore.SpecFile), // a crashed sweeper's: any age
	}
	kept := []string{
		buildDir(t, real, "young-empty", 0),
		buildDir(t, real, "young-temp", 0, ".job.json124"),
		buildDir(t, real, "notes", old, "notes.txt"),
		buildDir(t, real, "old-temp-and-notes", old, ".job.json125", "notes.txt"),
		buildDir(t, real, ".submit/d-4", 0, jobstore.SpecFile),
		buildDir(t, real, ".hidden", old),
		buildDir(t, real, ".swept-6", old), // not in .submit: not a sweep's
		filepath.Join(real, ".submit"),     // where Submit builds: it stays
	}
	// A build directory whose own mtime is old but one of whose files is
	// young is in progress (a write to a file does not touch the
	// directory's mtime).
	live := buildDir(t, real, ".submit/e-5", old, jobstore.SpecFile)
	agePath(t, filepath.Join(live, jobstore.SpecFile), 0)
	kept = append(kept, live)

	results, err := jobstore.ReconcileAll(root)
	require.NoError(t, err)
	got := map[string]error{}
	for _, r := range results {
		got[r.Dir.ID()] = r.Err
	}
	assert.Equal(t, []string{"a-job", "notes", "old-temp-and-notes", "young-empty", "young-temp"}, sortedKeys(got),
		"a removed directory is not in the results")
	assert.NoError(t, got["a-job"])
	for _, id := range []string{"notes", "old-temp-and-notes", "young-empty", "young-temp"} {
		assert.ErrorIs(t, got[id], jobstore.ErrNotJob, "%s", id)
	}
	for _, p := range gone {
		assert.NoDirExists(t, p)
	}
	for _, p := range kept {
		assert.DirExists(t, p)
	}
	assert.FileExists(t, filepath.Join(real, "old-temp-and-notes", "notes.txt"))
	assert.NoFileExists(t, filepath.Join(real, "old-temp-and-notes", ".job.json125"), "an old temp file is swept all the same")
	assert.FileExists(t, filepath.Join(real, "young-temp", ".job.json124"))
	assert.Equal(t, jobstore.Queued, readStatus(t, jobstore.JobDir(filepath.Join(root, "a-job"))).State)

	again, err := jobstore.ReconcileAll(root)
	require.NoError(t, err)
	assert.Len(t, again, len(results), "a second run removes nothing more")
}

// TestReconcileAll_LeavesDirectoriesAloneInARootWithoutJobs: a path that is
// not a jobs root (a home directory given by mistake) holds no job, so
// nothing in it is taken for a leftover of a Submit, however old and empty.
func TestReconcileAll_LeavesDirectoriesAloneInARootWithoutJobs(t *testing.T) {
	home := tempDir(t)
	old := 2 * jobstore.DefaultSweepAge
	music := buildDir(t, home, "Music", old)
	docs := buildDir(t, home, "Documents", old, ".job.json1")
	before := snapshot(t, home)
	results, err := jobstore.ReconcileAll(home)
	require.NoError(t, err)
	require.Len(t, results, 2)
	assert.DirExists(t, music)
	assert.DirExists(t, docs)
	after := snapshot(t, home)
	delete(before, filepath.Join("Documents", ".job.json1")) // SweepTemps removes an old temp file of ours
	delete(before, "Documents")
	delete(after, "Documents")
	assert.Equal(t, before, after)
}

// TestSubmit_TakesTheNameOfAnEmptyDirectoryOnly: an empty directory at the
// job's name is no job and is replaced; anything else there is ErrExists
// and stays as it was (a symbolic link is ErrNotRegular:
// TestSubmit_ANameTakenByASymlinkToAnEmptyDirectoryIsRefused).
func TestSubmit_TakesTheNameOfAnEmptyDirectoryOnly(t *testing.T) {
	root := tempDir(t)
	require.NoError(t, os.Mkdir(filepath.Join(root, "empty"), 0o755))
	dir, err := jobstore.Submit(root, jobstore.JobSpec{ID: "empty", Kind: "test"})
	require.NoError(t, err)
	requireWholeJobs(t, root, []string{dir.ID()})

	tempOnly := buildDir(t, root, "temp-only", 0, ".job.json7")
	file := filepath.Join(root, "a-file")
	writeFile(t, file, []byte("x"))
	for _, id := range []string{"temp-only", "a-file", "empty"} {
		before := snapshot(t, root)
		_, err := jobstore.Submit(root, jobstore.JobSpec{ID: id, Kind: "test"})
		require.ErrorIs(t, err, jobstore.ErrExists, "%s", id)
		assert.NotEmpty(t, errOf(t, err).Remedy)
		assert.Equal(t, before, snapshot(t, root), "a Submit of a taken ID touched the root")
	}
	assert.Equal(t, []string{".job.json7"}, names(t, tempOnly))
	assert.Empty(t, hiddenDirs(t, root))
	requireNoTempFiles(t, filepath.Join(root, "empty"))
}

// TestSubmit_RacersOfOneIDOneWins: of several Submits of one ID at once,
// exactly one makes the job; the others get ErrExists and leave nothing.
func TestSubmit_RacersOfOneIDOneWins(t *testing.T) {
	root := tempDir(t)
	const racers = 8
	for round := range 20 {
		id := "race-" + string(rune('a'+round))
		errs := make([]error, racers)
		var wg sync.WaitGroup
		for i := range racers {
			wg.Go(func() {
				_, errs[i] = jobstore.Submit(root, jobstore.JobSpec{ID: id, Kind: "test", Labels: map[string]string{"racer": string(rune('0' + i))}})
			})
		}
		wg.Wait()
		won := 0
		for _, err := range errs {
			if err == nil {
				won++
				continue
			}
			require.ErrorIs(t, err, jobstore.ErrExists)
		}
		require.Equal(t, 1, won, "round %d", round)
	}
	requireWholeJobs(t, root, nil)
	assert.Empty(t, hiddenDirs(t, root))
	requireNoTempFiles(t, root)
}

func sortedKeys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
