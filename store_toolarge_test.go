package jobstore_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// requireTooLargeToWrite checks a writer's ErrTooLarge: typed, with the
// sizes, and a remedy for a writer (not the reader's "remove the file").
func requireTooLargeToWrite(t *testing.T, err error, path string) {
	t.Helper()
	require.ErrorIs(t, err, jobstore.ErrTooLarge)
	var e *jobstore.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, path, e.Path)
	assert.NotEmpty(t, e.Op)
	assert.Greater(t, e.Found, int64(jobstore.DefaultMaxSize))
	assert.Equal(t, int64(jobstore.DefaultMaxSize), e.Supported)
	assert.Contains(t, e.Remedy, "smaller")
	assert.NotContains(t, err.Error(), "not a record jobstore wrote")
}

// overLimit is a string that makes any record longer than the read limit.
var overLimit = strings.Repeat("x", jobstore.DefaultMaxSize)

// TestWriteJSONAtomic_RefusesWhatReadersRefuse: the largest record a
// reader accepts is written and read back; one byte more is ErrTooLarge and
// touches nothing (not even a temp file: the directory is unchanged).
func TestWriteJSONAtomic_RefusesWhatReadersRefuse(t *testing.T) {
	dir := tempDir(t)
	path := filepath.Join(dir, "r.json")
	// A JSON string of n bytes encodes as n+2 quotes and a newline.
	largest := strings.Repeat("y", jobstore.DefaultMaxSize-3)
	require.NoError(t, jobstore.WriteJSONAtomic(path, largest))
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, int64(jobstore.DefaultMaxSize), fi.Size())
	var back string
	found, err := jobstore.ReadJSONTolerant(path, &back)
	require.NoError(t, err, "a reader with the default limit reads the largest record a writer writes")
	require.True(t, found)
	require.Equal(t, largest, back)

	before := snapshot(t, dir)
	err = jobstore.WriteJSONAtomic(path, largest+"y")
	requireTooLargeToWrite(t, err, path)
	assert.Equal(t, before, snapshot(t, dir), "nothing touched")
}

func TestWriters_RefuseARecordOverTheReadLimitBeforeTouchingAnything(t *testing.T) {
	tests := []struct {
		name string
		// write sets up under root and returns the path the error names and
		// the write to try.
		write func(t *testing.T, root string) (string, func() error)
	}{
		{"Submit", func(t *testing.T, root string) (string, func() error) {
			jobs := filepath.Join(root, "jobs")
			spec := jobstore.JobSpec{ID: "j1", Kind: "test", Params: []byte(`"` + overLimit + `"`)}
			return filepath.Join(jobs, "j1", jobstore.SpecFile), func() error { _, err := jobstore.Submit(jobs, spec); return err }
		}},
		{"WriteSpec", func(t *testing.T, root string) (string, func() error) {
			dir := jobstore.JobDir(filepath.Join(root, "j1"))
			spec := jobstore.JobSpec{ID: "j1", Kind: "test", Labels: map[string]string{"big": overLimit}}
			return dir.SpecPath(), func() error { return jobstore.WriteSpec(dir, spec) }
		}},
		{"WriteStatus", func(t *testing.T, root string) (string, func() error) {
			dir := writeJob(t, root, specAt("j1", 0), statusIn(jobstore.Queued, 1))
			st := jobstore.JobStatus{State: jobstore.Running, Seq: 2, Message: overLimit}
			return dir.StatusPath(), func() error { return jobstore.WriteStatus(dir, st) }
		}},
		{"Run.Progress", func(t *testing.T, root string) (string, func() error) {
			dir, r := startedIn(t, root)
			return dir.StatusPath(), func() error { return r.Progress(0.5, overLimit) }
		}},
		{"Run.SetMessage", func(t *testing.T, root string) (string, func() error) {
			dir, r := startedIn(t, root)
			return dir.StatusPath(), func() error { return r.SetMessage(overLimit) }
		}},
		{"Run.Finish", func(t *testing.T, root string) (string, func() error) {
			dir, r := startedIn(t, root)
			return dir.StatusPath(), func() error {
				return r.Finish(jobstore.Outcome{State: jobstore.Failed, Error: overLimit})
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := tempDir(t)
			path, write := tt.write(t, root)
			before := snapshot(t, root)
			requireTooLargeToWrite(t, write(), path)
			assert.Equal(t, before, snapshot(t, root), "nothing touched: no file, directory or temp file")
		})
	}
}

// startedIn submits and starts a job under root.
func startedIn(t *testing.T, root string) (jobstore.JobDir, *jobstore.Run) {
	t.Helper()
	dir, err := jobstore.Submit(root, jobstore.JobSpec{ID: "j1", Kind: "test"})
	require.NoError(t, err)
	r, err := jobstore.Start(dir)
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.Close() })
	return dir, r
}

func TestRun_TooLargeUpdateKeepsTheHandlesSeq(t *testing.T) {
	dir, r := startedIn(t, tempDir(t))
	seq := r.Status().Seq
	require.ErrorIs(t, r.SetMessage(overLimit), jobstore.ErrTooLarge)
	assert.Equal(t, seq, r.Status().Seq)
	require.NoError(t, r.SetMessage("fits"))
	assert.Equal(t, seq+1, readStatus(t, dir).Seq, "the next write takes the next seq")
}

func TestReadJSONTolerant_TooLargeRemedyFitsARead(t *testing.T) {
	path := filepath.Join(tempDir(t), "r.json")
	writeFile(t, path, []byte(`"abcdef"`))
	var v string
	_, err := jobstore.ReadJSONTolerant(path, &v, jobstore.WithMaxSize(4))
	require.ErrorIs(t, err, jobstore.ErrTooLarge)
	var e *jobstore.Error
	require.ErrorAs(t, err, &e)
	assert.Contains(t, e.Remedy, "WithMaxSize")
	assert.NotContains(t, e.Remedy, "not a record jobstore wrote", "jobstore did write such records before writers refused them")
}
