package jobstore_test

import (
	"testing"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRun_CloseOnTheNilRunOfAFailedStartIsSafe: Start returns a nil *Run
// with its error; closing that (a deferred Close written before the error
// check, say) must neither panic nor disturb the runner that holds the job.
func TestRun_CloseOnTheNilRunOfAFailedStartIsSafe(t *testing.T) {
	dir, holder := startJob(t)

	loser, err := jobstore.Start(dir)
	require.ErrorIs(t, err, jobstore.ErrLocked)
	require.Nil(t, loser)
	assert.NotPanics(t, func() { assert.NoError(t, loser.Close()) })

	// The holder still holds the lock and can write.
	_, err = jobstore.LockJob(dir)
	assert.ErrorIs(t, err, jobstore.ErrLocked, "closing the nil run released nothing")
	require.NoError(t, holder.Progress(0.5, "still mine"))
	require.NoError(t, holder.Close())
}
