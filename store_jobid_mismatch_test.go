package jobstore_test

import (
	"path/filepath"
	"testing"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A record whose job_id is not its directory's name describes another job
// (a directory renamed or copied by hand): every reader reports it for that
// job, naming both IDs, and nothing runs it or indexes it.

// mismatchedJob makes root/dirName holding job.json of specID and
// status.json (queued) of statusID, written directly as another tool could.
func mismatchedJob(t *testing.T, root, dirName, specID, statusID string) jobstore.JobDir {
	t.Helper()
	dir := jobstore.JobDir(filepath.Join(root, dirName))
	writeJob(t, root, specAt(dirName, 0), nil) // the directory, through the helper
	spec := specAt(specID, 0)
	spec.SchemaVersion = jobstore.JobSchemaVersion
	writeRecord(t, dir.SpecPath(), spec)
	st := statusIn(jobstore.Queued, 1)
	st.SchemaVersion, st.JobID = jobstore.StatusSchemaVersion, statusID
	writeRecord(t, dir.StatusPath(), st)
	return dir
}

// requireWrongJobID checks that err reports the job_id mismatch of a
// record: ErrInvalid, Subject job_id, naming both IDs.
func requireWrongJobID(t *testing.T, err error, found, dirID string) {
	t.Helper()
	e := errOf(t, err)
	require.ErrorIs(t, err, jobstore.ErrInvalid)
	assert.Equal(t, "job_id", e.Subject)
	assert.Equal(t, found, e.Found)
	assert.Contains(t, err.Error(), `"`+found+`"`)
	assert.Contains(t, err.Error(), `"`+dirID+`"`)
	assert.NotEmpty(t, e.Remedy)
}

func TestReaders_ReportAJobJSONOfAnotherJob(t *testing.T) {
	root := tempDir(t)
	good := writeJob(t, root, specAt("good", 1), statusIn(jobstore.Queued, 1))
	dir := mismatchedJob(t, root, "copy", "original", "copy")
	before := snapshot(t, root)

	_, err := jobstore.ReadSpec(dir)
	requireWrongJobID(t, err, "original", "copy")

	entries, err := jobstore.List(root)
	require.NoError(t, err)
	require.Len(t, entries, 2)
	var e jobstore.Entry
	for _, x := range entries {
		if x.Dir == dir {
			e = x
		}
	}
	require.Equal(t, dir, e.Dir)
	assert.Nil(t, e.Spec, "List's entry does not present another job's spec as this one's")
	requireWrongJobID(t, e.Err, "original", "copy")
	assert.Equal(t, before, snapshot(t, root), "the readers wrote nothing")

	_, err = jobstore.Start(dir)
	requireWrongJobID(t, err, "original", "copy")
	assert.Equal(t, jobstore.Queued, readStatus(t, dir).State, "Start refused: nothing was written")
	lk, err := jobstore.LockJob(dir)
	require.NoError(t, err, "Start released job.lock")
	require.NoError(t, lk.Unlock())

	idx, err := jobstore.RebuildIndex(root)
	require.NoError(t, err)
	require.Len(t, idx.Jobs, 1, "no row for the other job's spec")
	assert.Equal(t, good.ID(), idx.Jobs[0].ID)
	require.Len(t, idx.Unreadable, 1)
	assert.Equal(t, "copy", idx.Unreadable[0].ID, "the problem names the directory")
	assert.Contains(t, idx.Unreadable[0].Reason, `"original"`)
}

func TestReaders_ReportAStatusJSONOfAnotherJob(t *testing.T) {
	root := tempDir(t)
	dir := mismatchedJob(t, root, "copy", "copy", "original")

	_, err := jobstore.ReadStatus(dir)
	requireWrongJobID(t, err, "original", "copy")

	entries, err := jobstore.List(root)
	require.NoError(t, err)
	require.Len(t, entries, 1)
	assert.NotNil(t, entries[0].Spec, "job.json is this job's")
	assert.Nil(t, entries[0].Status)
	requireWrongJobID(t, entries[0].Err, "original", "copy")

	before := snapshot(t, root)
	_, err = jobstore.Start(dir)
	requireWrongJobID(t, err, "original", "copy")
	after := snapshot(t, root)
	delete(after, filepath.Join("copy", jobstore.LockFile)) // Start creates job.lock before it reads
	delete(after, "copy")
	delete(before, "copy")
	assert.Equal(t, before, after, "Start refused: status.json is as it was")

	idx, err := jobstore.RebuildIndex(root)
	require.NoError(t, err)
	assert.Empty(t, idx.Jobs)
	require.Len(t, idx.Unreadable, 1)
	assert.Equal(t, "copy", idx.Unreadable[0].ID)
}

func TestWriteStatus_RefusesTheJobIDOfAnotherJob(t *testing.T) {
	dir := submitJob(t, "mine")
	before := readFile(t, dir.StatusPath())
	err := jobstore.WriteStatus(dir, jobstore.JobStatus{JobID: "theirs", State: jobstore.Running, Seq: 2})
	requireWrongJobID(t, err, "theirs", "mine")
	assert.Equal(t, before, readFile(t, dir.StatusPath()))
	requireNoTempFiles(t, dir)
}
