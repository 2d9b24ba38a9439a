package jobstore_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/axqua/jobstore"
)

// batchSpecs returns n specs of kind "batch", with the IDs prefix-0 ...
// prefix-(n-1), or none (each then gets a new one) when prefix is "".
func batchSpecs(prefix string, n int) []jobstore.JobSpec {
	specs := make([]jobstore.JobSpec, n)
	for i := range specs {
		specs[i] = jobstore.JobSpec{Kind: "batch", Params: json.RawMessage(fmt.Sprintf(`{"i": %d}`, i))}
		if prefix != "" {
			specs[i].ID = fmt.Sprintf("%s-%d", prefix, i)
		}
	}
	return specs
}

func TestSubmitMany_MakesEveryJobWholeInTheOrderOfSpecs(t *testing.T) {
	for _, tc := range []struct {
		name   string
		prefix string
		n      int
	}{
		{"one job", "one", 1},
		{"IDs given", "job", 40},
		{"more jobs than are built at once", "many", 300},
		{"IDs made by NewJobID", "", 40},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := filepath.Join(tempDir(t), "missing", "jobs") // made, durably, by the batch
			specs := batchSpecs(tc.prefix, tc.n)
			dirs, err := jobstore.SubmitMany(root, specs)
			require.NoError(t, err)
			require.Len(t, dirs, tc.n)
			ids := map[string]bool{}
			for i, dir := range dirs {
				if tc.prefix != "" {
					assert.Equal(t, specs[i].ID, dir.ID())
				}
				ids[dir.ID()] = true
				spec, err := jobstore.ReadSpec(dir)
				require.NoError(t, err)
				assert.JSONEq(t, string(specs[i].Params), string(spec.Params), "job %d holds its own spec", i)
			}
			assert.Len(t, ids, tc.n, "every job has its own ID")
			requireWholeJobs(t, root, dirIDs(dirs))
			assert.Empty(t, hiddenDirs(t, root), "no build directory is left")
			requireNoTempFiles(t, root)
		})
	}
}

func TestSubmitMany_EmptyBatchDoesNothing(t *testing.T) {
	root := filepath.Join(tempDir(t), "jobs")
	dirs, err := jobstore.SubmitMany(root, nil)
	require.NoError(t, err)
	assert.Empty(t, dirs)
	assert.NoDirExists(t, root)
}

// TestSubmitMany_InvalidSpecWritesNothing puts a spec that cannot be
// submitted in the middle of a batch: nothing is written, not even the
// root, and the error names that spec.
func TestSubmitMany_InvalidSpecWritesNothing(t *testing.T) {
	for _, tc := range []struct {
		name    string
		bad     jobstore.JobSpec
		subject string
		path    string // the job the error names, relative to the root
		msg     string
	}{
		{"no kind", jobstore.JobSpec{ID: "b-9"}, "kind", "b-9/" + jobstore.SpecFile, "specs[3] of 6"},
		{"params not JSON", jobstore.JobSpec{ID: "b-9", Kind: "batch", Params: json.RawMessage(`{`)}, "params", "b-9/" + jobstore.SpecFile, "specs[3] of 6"},
		{"a bad job ID", jobstore.JobSpec{ID: "../b-9", Kind: "batch"}, "job_id", "", "specs[3] of 6"},
		{"the ID of an earlier spec", jobstore.JobSpec{ID: "b-1", Kind: "batch"}, "job_id", "b-1", "specs[1] and specs[3]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := filepath.Join(tempDir(t), "jobs")
			specs := batchSpecs("b", 6)
			specs[3] = tc.bad
			dirs, err := jobstore.SubmitMany(root, specs)
			require.ErrorIs(t, err, jobstore.ErrInvalid)
			assert.Empty(t, dirs)
			e := errOf(t, err)
			assert.Equal(t, tc.subject, e.Subject)
			if tc.path != "" {
				assert.Equal(t, filepath.Join(root, tc.path), e.Path)
			}
			assert.Contains(t, err.Error(), tc.msg)
			assert.NoDirExists(t, root, "nothing is written, not even the root")
		})
	}
}

// TestSubmitMany_TakenIDEndsTheBatch submits a batch one of whose IDs is
// taken: the jobs before it are made, durable and returned, the error is
// ErrExists naming it, nothing after it is made, and no build directory
// is left; in a batch larger than is built at once, the taken ID is in a
// later part of it.
func TestSubmitMany_TakenIDEndsTheBatch(t *testing.T) {
	for _, tc := range []struct{ n, taken int }{{8, 3}, {300, 270}} {
		t.Run(fmt.Sprintf("%d of %d", tc.taken, tc.n), func(t *testing.T) {
			root := filepath.Join(tempDir(t), "jobs")
			id := fmt.Sprintf("b-%d", tc.taken)
			taken, err := jobstore.Submit(root, jobstore.JobSpec{ID: id, Kind: "first"})
			require.NoError(t, err)
			before := snapshot(t, string(taken))

			specs := batchSpecs("b", tc.n)
			dirs, err := jobstore.SubmitMany(root, specs)
			require.ErrorIs(t, err, jobstore.ErrExists)
			require.ErrorIs(t, err, fs.ErrExist)
			require.Len(t, dirs, tc.taken)
			for i, d := range dirs {
				require.Equal(t, specs[i].ID, d.ID())
			}
			assert.Equal(t, id, filepath.Base(errOf(t, err).Path), "specs[len(dirs)] is the job the error names")
			assert.Contains(t, err.Error(), fmt.Sprintf("specs[%d] of %d (job %s)", tc.taken, tc.n, id))
			for _, s := range specs[tc.taken+1:] {
				assert.NoDirExists(t, filepath.Join(root, s.ID), "a job after the failure is made")
			}
			assert.Equal(t, before, snapshot(t, string(taken)), "the job that held the ID is untouched")
			requireWholeJobs(t, root, append(dirIDs(dirs), id))
			assert.Empty(t, hiddenDirs(t, root), "no build directory is left")
		})
	}
}

func dirIDs(dirs []jobstore.JobDir) []string {
	ids := make([]string, len(dirs))
	for i, d := range dirs {
		ids[i] = d.ID()
	}
	return ids
}

// submitterHoldTimeout bounds how long a Submit held at a seam, or one
// that must not wait for it, is waited for.
const submitterHoldTimeout = 10 * time.Second

// TestSubmit_NothingSerialisesSubmittersOfDifferentJobs holds a Submit
// between its steps (after its build directory is made, after its records
// are written, after its rename) and submits other jobs, alone and in a
// batch, meanwhile: they finish while the first is held, so no lock of
// the root is kept across a Submit's work.
func TestSubmit_NothingSerialisesSubmittersOfDifferentJobs(t *testing.T) {
	for _, step := range []string{"mkdir", jobstore.StatusFile, "published"} {
		t.Run("held after "+step, func(t *testing.T) {
			root := filepath.Join(tempDir(t), "jobs")
			reached, release := make(chan struct{}), make(chan struct{})
			jobstore.OnSubmitStep(t, func(s, path string) {
				if s == step && strings.Contains(filepath.Base(path), "held") {
					close(reached)
					<-release
				}
			})
			done := make(chan error, 1)
			go func() {
				_, err := jobstore.Submit(root, jobstore.JobSpec{ID: "held", Kind: "batch"})
				done <- err
			}()
			t.Cleanup(func() {
				close(release)
				require.NoError(t, <-done)
			})
			select {
			case <-reached:
			case <-time.After(submitterHoldTimeout):
				t.Fatal("the held Submit never reached its step")
			}
			others := make(chan error, 1)
			go func() {
				_, err := jobstore.Submit(root, jobstore.JobSpec{ID: "other", Kind: "batch"})
				if err == nil {
					_, err = jobstore.SubmitMany(root, batchSpecs("more", 4))
				}
				others <- err
			}()
			select {
			case err := <-others:
				require.NoError(t, err)
			case <-time.After(submitterHoldTimeout):
				t.Fatal("a Submit of another job waited for the held one")
			}
		})
	}
}

// Killing a batch submitter at random instants: every job is whole.

const (
	batchKillRounds = 30
	batchKillSize   = 4
	batchKillerRole = "kill-batch-submitter"
)

// killBatchSubmitter is the child: it submits batches as fast as it can,
// printing the IDs of each once SubmitMany has returned them, until it is
// killed.
func killBatchSubmitter() int {
	root := os.Getenv(submitKillerRootEnv)
	fmt.Println(killWriterReadyLine)
	for {
		dirs, err := jobstore.SubmitMany(root, batchSpecs("", batchKillSize))
		if err != nil {
			fmt.Printf("error: %v\n", err)
			return 1
		}
		for _, d := range dirs {
			fmt.Println(d.ID())
		}
	}
}

func init() { roles[batchKillerRole] = killBatchSubmitter }

// TestSubmitMany_KilledAtAnyInstantLeavesWholeJobsOnly kills a process
// that submits batches, at random instants, batchKillRounds times: after
// every kill every job under the root is whole and readable, every job
// acknowledged is there, and a kill leaves at most a batch's build
// directories, which ReconcileAll removes once they are old.
func TestSubmitMany_KilledAtAnyInstantLeavesWholeJobsOnly(t *testing.T) {
	root := filepath.Join(tempDir(t), "jobs")
	require.NoError(t, os.Mkdir(root, 0o755))
	var acked []string
	leftovers, jobs := 0, 0
	for round := 1; round <= batchKillRounds; round++ {
		// The last round is killed only after a batch was acknowledged: on a
		// slow machine every other kill may come before the first.
		acked = append(acked, runKilledSubmitter(t, batchKillerRole, root, round == batchKillRounds)...)
		jobs = requireWholeList(t, root, acked)
		hidden := hiddenDirs(t, root)
		require.LessOrEqual(t, len(hidden), leftovers+batchKillSize, "round %d: one kill left more than a batch of build directories: %v", round, hidden)
		leftovers = len(hidden)
	}
	require.NotEmpty(t, acked, "no batch was acknowledged before a kill")
	t.Logf("%d kills: %d jobs acknowledged, %d whole jobs in all (%d from batches a kill cut short), %d build directories left",
		batchKillRounds, len(acked), jobs, jobs-len(acked), leftovers)

	ageTree(t, root, 2*jobstore.DefaultSweepAge)
	requireWholeJobs(t, root, acked)
	assert.Empty(t, hiddenDirs(t, root), "ReconcileAll removes the old build directories")
	requireNoTempFiles(t, root)
}

func ExampleSubmitMany() {
	root := exampleRoot()
	defer os.RemoveAll(root)

	specs := []jobstore.JobSpec{
		{ID: "render-1", Kind: "render", Params: json.RawMessage(`{"frame": 1}`)},
		{ID: "render-2", Kind: "render", Params: json.RawMessage(`{"frame": 2}`)},
		{ID: "render-3", Kind: "render", Params: json.RawMessage(`{"frame": 3}`)},
	}
	dirs, err := jobstore.SubmitMany(root, specs)
	fmt.Println(len(dirs), err)

	// A batch stops at the first job it cannot make; the jobs before it stay.
	more := []jobstore.JobSpec{
		{ID: "render-4", Kind: "render"},
		{ID: "render-2", Kind: "render"}, // taken by the first batch
		{ID: "render-5", Kind: "render"},
	}
	dirs, err = jobstore.SubmitMany(root, more)
	var e *jobstore.Error
	if errors.As(err, &e) && errors.Is(err, jobstore.ErrExists) {
		fmt.Println(len(dirs), "made;", more[len(dirs)].ID, "is taken:", filepath.Base(e.Path))
	}
	// Output:
	// 3 <nil>
	// 1 made; render-2 is taken: render-2
}
