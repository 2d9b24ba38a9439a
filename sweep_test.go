package jobstore_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sweepAge is the threshold the sweep tests use; "old" files are twice as old.
const sweepAge = time.Hour

func TestSweepTemps_RemovesOnlyOldTempFiles(t *testing.T) {
	dir := writeJob(t, tempDir(t), specAt("j1", 0), statusIn(jobstore.Running, 2))
	old := 2 * sweepAge
	removable := []string{".status.json123", ".job.json9", ".index.json42"}
	for _, name := range removable {
		tempFile(t, string(dir), name, old)
	}
	kept := map[string]time.Duration{
		".status.json777": 0,            // a live writer's temp file
		".status.json778": sweepAge / 2, // younger than the threshold
		".status.jsonx12": old,          // not digits: not ours
		".status.json":    old,          // no digits
		".hidden":         old,          // a dotfile that is no temp file
		"status.json123":  old,          // no dot
		".other.json123":  old,          // not one of our records
		"notes.txt":       old,
	}
	for name, age := range kept {
		tempFile(t, string(dir), name, age)
	}
	tempNamedDir := filepath.Join(string(dir), ".status.json999") // a directory, never removed
	require.NoError(t, os.Mkdir(tempNamedDir, 0o755))
	old2 := time.Now().Add(-old)
	require.NoError(t, os.Chtimes(tempNamedDir, old2, old2))
	require.NoError(t, os.Chtimes(dir.StatusPath(), old2, old2))
	require.NoError(t, os.Chtimes(dir.SpecPath(), old2, old2))

	removed, err := jobstore.SweepTemps(dir, sweepAge)
	require.NoError(t, err)
	assert.ElementsMatch(t, removable, removed)
	for _, name := range removable {
		assert.NoFileExists(t, filepath.Join(string(dir), name))
	}
	for name := range kept {
		assert.FileExists(t, filepath.Join(string(dir), name))
	}
	assert.DirExists(t, tempNamedDir)
	assert.FileExists(t, dir.StatusPath())
	assert.FileExists(t, dir.SpecPath())

	again, err := jobstore.SweepTemps(dir, sweepAge)
	require.NoError(t, err)
	assert.Empty(t, again)
}

func TestSweepTemps_BadInput(t *testing.T) {
	_, err := jobstore.SweepTemps(jobstore.JobDir(tempDir(t)), -time.Second)
	require.ErrorIs(t, err, jobstore.ErrInvalid)
	_, err = jobstore.SweepTemps(jobstore.JobDir(filepath.Join(tempDir(t), "nope")), time.Second)
	require.ErrorIs(t, err, os.ErrNotExist)
}
