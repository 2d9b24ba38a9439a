package jobstore_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRebuildIndex_RoundTripsAndListsUnreadableJobs(t *testing.T) {
	root := tempDir(t)
	p := 0.5
	running := statusIn(jobstore.Running, 4)
	running.Progress = &p
	writeJob(t, root, specAt("a-running", 1), running)
	writeJob(t, root, specAt("b-queued-no-status", 2), nil)
	broken := writeJob(t, root, specAt("c-broken", 3), nil)
	require.NoError(t, os.WriteFile(broken.StatusPath(), []byte("\x00\x00\x00"), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(root, "d-empty"), 0o755))
	oldTemp := tempFile(t, root, ".index.json55", 2*jobstore.DefaultSweepAge)

	before := jobstore.Now()
	built, err := jobstore.RebuildIndex(root)
	require.NoError(t, err)
	assert.False(t, built.BuiltAt.Before(before), "the index says when it was built")
	assert.Equal(t, 1, built.SchemaVersion, "index.json is at schema version 1")
	assert.NoFileExists(t, oldTemp, "a crashed rebuild's temp file is swept")

	updated := running.UpdatedAt
	assert.Equal(t, []jobstore.IndexRow{
		{ID: "a-running", Kind: "test", State: jobstore.Running, Progress: &p, Seq: 4,
			SubmittedAt: specAt("", 1).SubmittedAt, UpdatedAt: &updated},
		{ID: "b-queued-no-status", Kind: "test", SubmittedAt: specAt("", 2).SubmittedAt},
	}, built.Jobs)
	require.Len(t, built.Unreadable, 2)
	assert.Equal(t, "c-broken", built.Unreadable[0].ID)
	assert.Contains(t, built.Unreadable[0].Reason, "NUL bytes", "the reason is the read error")
	assert.Equal(t, "d-empty", built.Unreadable[1].ID)
	assert.Contains(t, built.Unreadable[1].Reason, "no job.json")

	read, err := jobstore.ReadIndex(root)
	require.NoError(t, err)
	assert.Equal(t, built, read, "ReadIndex returns what RebuildIndex wrote")
}

func TestRebuildIndex_FileUsesTheRecordsTimestampFormat(t *testing.T) {
	root := tempDir(t)
	writeJob(t, root, specAt("a", 0), statusIn(jobstore.Queued, 1))
	_, err := jobstore.RebuildIndex(root)
	require.NoError(t, err)
	data, err := os.ReadFile(filepath.Join(root, jobstore.IndexFile))
	require.NoError(t, err)
	var raw struct {
		BuiltAt string `json:"built_at"`
		Jobs    []struct {
			SubmittedAt string `json:"submitted_at"`
			UpdatedAt   string `json:"updated_at"`
		} `json:"jobs"`
		Unreadable []any `json:"unreadable"`
	}
	require.NoError(t, json.Unmarshal(data, &raw))
	iso := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$`)
	assert.Regexp(t, iso, raw.BuiltAt)
	require.Len(t, raw.Jobs, 1)
	assert.Equal(t, "2026-11-30T09:00:00.000000+00:00", raw.Jobs[0].SubmittedAt)
	assert.Equal(t, "2026-11-30T09:30:00.000000+00:00", raw.Jobs[0].UpdatedAt)
	assert.NotNil(t, raw.Unreadable, "an empty list is [], not null, for pollers")
}

func TestReadIndex_Problems(t *testing.T) {
	t.Run("missing", func(t *testing.T) {
		_, err := jobstore.ReadIndex(tempDir(t))
		require.ErrorIs(t, err, os.ErrNotExist)
		assert.Contains(t, err.Error(), "RebuildIndex")
	})
	t.Run("newer schema", func(t *testing.T) {
		root := tempDir(t)
		require.NoError(t, os.WriteFile(filepath.Join(root, jobstore.IndexFile),
			[]byte(`{"schema_version": 99, "built_at": "2026-11-30T09:00:00+00:00", "jobs": [], "unreadable": []}`), 0o644))
		_, err := jobstore.ReadIndex(root)
		require.ErrorIs(t, err, jobstore.ErrNewerSchema)
		assert.Contains(t, err.Error(), "RebuildIndex")
		assert.Contains(t, err.Error(), filepath.Join(root, jobstore.IndexFile))
	})
	t.Run("older schema: the records' rule, no step to version 1", func(t *testing.T) {
		root := tempDir(t)
		require.NoError(t, os.WriteFile(filepath.Join(root, jobstore.IndexFile),
			[]byte(`{"built_at": "2026-11-30T09:00:00+00:00", "jobs": [], "unreadable": []}`), 0o644))
		_, err := jobstore.ReadIndex(root)
		require.ErrorIs(t, err, jobstore.ErrNoMigration)
		assert.Contains(t, err.Error(), "RebuildIndex")
	})
	t.Run("schema_version not an integer", func(t *testing.T) {
		root := tempDir(t)
		require.NoError(t, os.WriteFile(filepath.Join(root, jobstore.IndexFile),
			[]byte(`{"schema_version": "1", "built_at": "2026-11-30T09:00:00+00:00", "jobs": [], "unreadable": []}`), 0o644))
		_, err := jobstore.ReadIndex(root)
		require.ErrorIs(t, err, jobstore.ErrInvalid)
	})
	t.Run("corrupt", func(t *testing.T) {
		root := tempDir(t)
		require.NoError(t, os.WriteFile(filepath.Join(root, jobstore.IndexFile), []byte(`{"jobs": [`), 0o644))
		_, err := jobstore.ReadIndex(root)
		require.ErrorIs(t, err, jobstore.ErrCorrupt)
	})
}

func TestRebuildIndex_MissingRootIsAnError(t *testing.T) {
	_, err := jobstore.RebuildIndex(filepath.Join(tempDir(t), "nope"))
	require.ErrorIs(t, err, os.ErrNotExist)
}
