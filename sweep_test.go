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

// A runner fenced while writing may leave its temp file in .fenced-N: the
// sweep removes it there too, and leaves the fence, its marker, and the
// .run-N of an attempt not over (a live runner's) alone.
func TestSweepTemps_SweepsFencedAttemptDirectories(t *testing.T) {
	dir := writeJob(t, tempDir(t), specAt("j1", 0), statusIn(jobstore.Running, 2))
	old := 2 * sweepAge
	fenced := jobstore.FencedDirPath(dir, 1)
	run := jobstore.RunDirPath(dir, 2)
	require.NoError(t, os.Mkdir(fenced, 0o755))
	require.NoError(t, os.Mkdir(run, 0o755))
	tempFile(t, fenced, ".status.json123", old)
	tempFile(t, fenced, ".owner.json9", old)
	tempFile(t, fenced, ".status.json456", 0) // young: left to its writer
	tempFile(t, fenced, "fenced-by", old)     // the marker
	tempFile(t, run, ".status.json123", old)  // a live attempt's
	tempFile(t, run, "lease", old)

	removed, err := jobstore.SweepTemps(dir, sweepAge)
	require.NoError(t, err)
	base := filepath.Base(fenced)
	assert.ElementsMatch(t, []string{filepath.Join(base, ".status.json123"), filepath.Join(base, ".owner.json9")}, removed)
	assert.NoFileExists(t, filepath.Join(fenced, ".status.json123"))
	assert.NoFileExists(t, filepath.Join(fenced, ".owner.json9"))
	assert.FileExists(t, filepath.Join(fenced, ".status.json456"))
	assert.FileExists(t, filepath.Join(fenced, "fenced-by"))
	assert.FileExists(t, filepath.Join(run, ".status.json123"))
	assert.FileExists(t, filepath.Join(run, "lease"))
	assert.DirExists(t, fenced)
	assert.DirExists(t, run)
}
