package jobstore_test

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ids returns the entries' job IDs in order.
func ids(entries []jobstore.Entry) []string {
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = e.Dir.ID()
	}
	return out
}

func TestList_OrderAndWhatIsSkipped(t *testing.T) {
	root := tempDir(t)
	writeJob(t, root, specAt("c-first", 1), statusIn(jobstore.Running, 2))
	writeJob(t, root, specAt("b-second", 2), nil)
	writeJob(t, root, specAt("a-second-too", 2), statusIn(jobstore.Queued, 1)) // same time: by ID
	writeJob(t, root, specAt("z-earliest", 0), statusIn(jobstore.Succeeded, 9))
	require.NoError(t, os.Mkdir(filepath.Join(root, "m-not-a-job"), 0o755))
	bad := writeJob(t, root, specAt("k-bad-spec", 0), statusIn(jobstore.Failed, 4))
	require.NoError(t, os.Chmod(bad.SpecPath(), 0o644))
	require.NoError(t, os.WriteFile(bad.SpecPath(), []byte(`{"schema_version": 1, "job_id": 7}`), 0o644))
	// Skipped: dot-names, index.json, plain files.
	require.NoError(t, os.Mkdir(filepath.Join(root, ".hidden"), 0o755))
	writeJob(t, filepath.Join(root, ".trash"), specAt("gone", 0), nil)
	require.NoError(t, os.WriteFile(filepath.Join(root, jobstore.IndexFile), []byte("{}"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "README"), nil, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, ".index.json123"), nil, 0o644))

	entries, err := jobstore.List(root)
	require.NoError(t, err)
	assert.Equal(t, []string{"z-earliest", "c-first", "a-second-too", "b-second", "k-bad-spec", "m-not-a-job"}, ids(entries),
		"by submitted_at, then ID; jobs without a readable spec last, by ID")

	byID := map[string]jobstore.Entry{}
	for _, e := range entries {
		byID[e.Dir.ID()] = e
	}
	assert.Equal(t, jobstore.JobDir(filepath.Join(root, "c-first")), byID["c-first"].Dir)
	require.NotNil(t, byID["c-first"].Status)
	assert.Equal(t, jobstore.Running, byID["c-first"].Status.State)
	assert.Equal(t, "test", byID["c-first"].Spec.Kind)
	assert.NoError(t, byID["c-first"].Err)
	assert.Nil(t, byID["b-second"].Status, "no status yet is not an error")
	assert.NoError(t, byID["b-second"].Err)

	assert.Nil(t, byID["k-bad-spec"].Spec)
	assert.ErrorIs(t, byID["k-bad-spec"].Err, jobstore.ErrInvalid)
	require.NotNil(t, byID["k-bad-spec"].Status, "a readable status is still reported")
	assert.Equal(t, jobstore.Failed, byID["k-bad-spec"].Status.State)
	assert.ErrorIs(t, byID["m-not-a-job"].Err, jobstore.ErrNotJob)
}

// listJobs is how many jobs the corrupt-status test lists.
const listJobs = 1000

func TestList_CorruptStatusInOneOfAThousandIsThatEntrysErrorOnly(t *testing.T) {
	root := tempDir(t)
	var victim jobstore.JobDir
	for i := range listJobs {
		dir := writeJob(t, root, specAt(fmt.Sprintf("job-%04d", i), i), statusIn(jobstore.Running, uint64(i+1)))
		if i == listJobs/2 {
			victim = dir
		}
	}
	require.NoError(t, os.WriteFile(victim.StatusPath(), []byte(`{"schema_version":1,"state":"runn`), 0o644))

	entries, err := jobstore.List(root)
	require.NoError(t, err)
	require.Len(t, entries, listJobs)
	for i, e := range entries {
		require.Equal(t, fmt.Sprintf("job-%04d", i), e.Dir.ID())
		require.NotNil(t, e.Spec, e.Dir)
		if e.Dir == victim {
			assert.ErrorIs(t, e.Err, jobstore.ErrCorrupt)
			assert.Contains(t, e.Err.Error(), victim.StatusPath())
			assert.Nil(t, e.Status)
			continue
		}
		require.NoError(t, e.Err, e.Dir)
		require.NotNil(t, e.Status)
		require.Equal(t, uint64(i+1), e.Status.Seq)
	}
}

func TestList_MissingRootIsAnErrorWithARemedy(t *testing.T) {
	root := filepath.Join(tempDir(t), "nope")
	_, err := jobstore.List(root)
	require.ErrorIs(t, err, os.ErrNotExist)
	var e *jobstore.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, root, e.Path)
	assert.NotEmpty(t, e.Remedy)
}

func TestList_EmptyRootIsEmpty(t *testing.T) {
	entries, err := jobstore.List(tempDir(t))
	require.NoError(t, err)
	assert.Empty(t, entries)
}

func TestJobDirs_ListsDirectoriesWithoutReadingThem(t *testing.T) {
	root := tempDir(t)
	for _, d := range []string{"b-job", "a-job", ".hidden", "no-records-yet"} {
		require.NoError(t, os.Mkdir(filepath.Join(root, d), 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(root, "index.json"), []byte(`{}`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, ".index.json123"), nil, 0o644))

	dirs, err := jobstore.JobDirs(root)
	require.NoError(t, err)
	var names []string
	for _, d := range dirs {
		names = append(names, d.ID())
	}
	assert.Equal(t, []string{"a-job", "b-job", "no-records-yet"}, names)

	_, err = jobstore.JobDirs(filepath.Join(root, "missing"))
	assert.ErrorIs(t, err, fs.ErrNotExist)
}
