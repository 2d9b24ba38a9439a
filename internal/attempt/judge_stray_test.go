package attempt

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A Take that finds attempt n over removes the .run-n it has just made; a
// crash between the two leaves .run-n beside .fenced-n. That is no claim:
// the attempt is over, at once, for every judge, whoever job.lock names,
// and the attempt after it can be claimed; were it judged a claim, every
// claimant would wait a whole lease on a process that never was its owner.
func TestJudge_ARunBesideItsFenceIsOver(t *testing.T) {
	dir, job := newJob(t)
	c, err := Take(job, 1)
	require.NoError(t, err)
	won, err := Fence(job, 1, "test")
	require.NoError(t, err)
	require.True(t, won)
	c.Close()
	require.NoError(t, os.Mkdir(filepath.Join(dir, RunName(1)), 0o755)) // the crashed Take's mkdir

	for _, owner := range []*Owner{nil, {Host: "hostA", PID: os.Getpid()}} {
		v, why, err := judgeSoon(t, job, dir, 1, owner, "hostB", time.Hour)
		require.NoError(t, err)
		require.Equal(t, Over, v, why)
	}
	_, err = Take(job, 1)
	require.Error(t, err, "attempt 1 stays over")
	next, err := Take(job, 2)
	require.NoError(t, err, "the attempt after it is free")
	next.Close()
}
