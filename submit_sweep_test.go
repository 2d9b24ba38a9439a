package jobstore_test

import (
	"path/filepath"
	"sync"
	"testing"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pausedSubmit starts a Submit of id under root in a goroutine and waits
// until it has done step; it stays there until resume is called, which
// returns Submit's error. path is the build directory (or, after
// "published", the job's).
func pausedSubmit(t *testing.T, root, id, step string) (path string, resume func() error) {
	t.Helper()
	paused := make(chan string)
	release := make(chan struct{})
	jobstore.OnSubmitStep(t, func(s, p string) {
		if s == step {
			paused <- p
			<-release
		}
	})
	done := make(chan error, 1)
	go func() {
		_, err := jobstore.Submit(root, jobstore.JobSpec{ID: id, Kind: "test"})
		done <- err
	}()
	select {
	case path = <-paused:
	case err := <-done:
		t.Fatalf("Submit returned (%v) without passing step %q", err, step)
	}
	return path, func() error {
		close(release)
		return <-done
	}
}

// sweepEverything runs every function that sweeps under root.
func sweepEverything(t *testing.T, root string) {
	t.Helper()
	results, err := jobstore.ReconcileAll(root)
	require.NoError(t, err)
	for _, r := range results {
		require.NoError(t, r.Err, "%s", r.Dir)
	}
	_, err = jobstore.RebuildIndex(root)
	require.NoError(t, err)
}

// TestSubmit_InProgressIsNeverSwept pauses a Submit after each of its steps
// and runs ReconcileAll and RebuildIndex meanwhile: the job being built is
// left exactly as it was, and the Submit then completes a whole job.
func TestSubmit_InProgressIsNeverSwept(t *testing.T) {
	for _, step := range jobstore.SubmitSteps {
		t.Run(step, func(t *testing.T) {
			root := tempDir(t)
			_, err := jobstore.Submit(root, jobstore.JobSpec{ID: "other", Kind: "test"}) // the root holds a job
			require.NoError(t, err)
			path, resume := pausedSubmit(t, root, "new", step)
			before := snapshot(t, path)

			sweepEverything(t, root)

			assert.Equal(t, before, snapshot(t, path), "a sweep touched the Submit in progress")
			require.NoError(t, resume())
			requireWholeJobs(t, root, []string{"other", "new"})
			assert.Empty(t, hiddenDirs(t, root))
			requireNoTempFiles(t, root)
		})
	}
}

// TestSubmit_StalledLongerThanTheSweepAgePublishesNothing: a Submit whose
// step takes longer than DefaultSweepAge (its build directory looks
// abandoned) may lose it to a sweep; it then fails, and no job appears,
// neither whole nor half.
func TestSubmit_StalledLongerThanTheSweepAgePublishesNothing(t *testing.T) {
	for _, step := range jobstore.SubmitSteps {
		t.Run(step, func(t *testing.T) {
			root := tempDir(t)
			_, err := jobstore.Submit(root, jobstore.JobSpec{ID: "other", Kind: "test"})
			require.NoError(t, err)
			path, resume := pausedSubmit(t, root, "new", step)
			ageTree(t, root, 2*jobstore.DefaultSweepAge)

			sweepEverything(t, root)

			err = resume()
			if step == "published" || step == "indexed" {
				require.NoError(t, err, "the job was in place before the sweep")
				requireWholeJobs(t, root, []string{"other", "new"})
				return
			}
			assert.NoDirExists(t, path, "the abandoned build directory is swept")
			e := errOf(t, err)
			assert.Contains(t, e.Msg, "removed meanwhile", "%v", err)
			assert.NotEmpty(t, e.Remedy)
			assert.NoDirExists(t, filepath.Join(root, "new"), "no job appears")
			requireWholeJobs(t, root, []string{"other"})
			assert.Empty(t, hiddenDirs(t, root), "left in the root")
		})
	}
}

// TestSubmit_StalledRacingASweepPublishesNothing: a sweep that judged a
// stalled Submit's build directory abandoned is emptying it when the
// Submit comes back and renames it into place: the sweep took the directory
// by a rename first, so the Submit's rename fails, and no job appears, not
// even an empty one.
func TestSubmit_StalledRacingASweepPublishesNothing(t *testing.T) {
	root := tempDir(t)
	_, err := jobstore.Submit(root, jobstore.JobSpec{ID: "other", Kind: "test"})
	require.NoError(t, err)
	_, resume := pausedSubmit(t, root, "new", jobstore.StatusFile) // built, not yet renamed
	ageTree(t, root, 2*jobstore.DefaultSweepAge)

	emptied := make(chan struct{})
	release := make(chan struct{})
	var once sync.Once
	jobstore.OnSweepStep(t, func(step, path string) {
		if step == "emptied" {
			once.Do(func() {
				close(emptied)
				<-release
			})
		}
	})
	swept := make(chan error, 1)
	go func() {
		_, err := jobstore.ReconcileAll(root)
		swept <- err
	}()
	<-emptied
	submitErr := resume() // the Submit renames its build directory now
	close(release)
	require.NoError(t, <-swept)

	require.Error(t, submitErr, "the Submit published a build directory a sweep was emptying")
	assert.NoDirExists(t, filepath.Join(root, "new"))
	requireWholeJobs(t, root, []string{"other"})
}

// TestWriteSpec_NewJobAppearsWholeOrNotAtAll: WriteSpec of a directory that
// does not exist builds it as Submit does: paused before its rename, the
// job directory does not exist yet (a failure leaves nothing:
// TestDiskFull_WritesFailWithENOSPCAndLeaveRecordsIntact).
func TestWriteSpec_NewJobAppearsWholeOrNotAtAll(t *testing.T) {
	root := filepath.Join(tempDir(t), "jobs")
	dir := jobstore.JobDir(filepath.Join(root, "new"))
	paused := make(chan struct{})
	jobstore.OnSubmitStep(t, func(step, path string) {
		if step == jobstore.SpecFile {
			assert.NoDirExists(t, string(dir), "the job directory appeared before job.json was in it")
			assert.FileExists(t, filepath.Join(path, jobstore.SpecFile))
			close(paused)
		}
	})
	require.NoError(t, jobstore.WriteSpec(dir, jobstore.JobSpec{ID: "new", Kind: "test"}))
	select {
	case <-paused:
	default:
		t.Fatal("WriteSpec did not build the new job in a build directory")
	}
	spec, err := jobstore.ReadSpec(dir)
	require.NoError(t, err)
	assert.Equal(t, "new", spec.ID)
	st, err := jobstore.ReadStatus(dir)
	require.NoError(t, err)
	assert.Nil(t, st, "WriteSpec writes no status")
	assert.Equal(t, []string{"new"}, names(t, root))
	assert.Empty(t, hiddenDirs(t, root))
}
