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

func TestWithReplaceTimeout_NegativeIsErrInvalidAndTouchesNothing(t *testing.T) {
	dir := jobstore.JobDir(filepath.Join(tempDir(t), "j1"))
	require.NoError(t, jobstore.WriteSpec(dir, jobstore.JobSpec{ID: "j1", Kind: "test"}))
	require.NoError(t, jobstore.WriteStatus(dir, jobstore.JobStatus{State: jobstore.Queued, Seq: 1}))
	before, err := os.ReadFile(dir.StatusPath())
	require.NoError(t, err)

	err = jobstore.WriteStatus(dir, jobstore.JobStatus{State: jobstore.Running, Seq: 2}, jobstore.WithReplaceTimeout(-time.Millisecond))
	require.ErrorIs(t, err, jobstore.ErrInvalid)
	var e *jobstore.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, dir.StatusPath(), e.Path)
	assert.Contains(t, err.Error(), "-1ms")
	assert.Contains(t, e.Remedy, "WithReplaceTimeout")

	after, err := os.ReadFile(dir.StatusPath())
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after))
	entries, err := os.ReadDir(string(dir))
	require.NoError(t, err)
	for _, de := range entries {
		assert.False(t, jobstore.IsTempName(de.Name()), "temp file left: %s", de.Name())
	}

	require.NoError(t, jobstore.WriteStatus(dir, jobstore.JobStatus{State: jobstore.Running, Seq: 2}, jobstore.WithReplaceTimeout(0)),
		"0 is valid: one try, which succeeds when nobody holds the file")
}
