package jobstore

import (
	"testing"

	"github.com/axqua/jobstore/internal/fsys"
	"github.com/stretchr/testify/require"
)

// claimFinished acts on a status that is not terminal only if its refuse
// lets it: every refuse it is given refuses each such status, nil included.
func TestClaimFinished_EveryRefusalRefusesAnUnfinishedStatus(t *testing.T) {
	refusals := []struct {
		name   string
		refuse func(string, *fsys.Dir, *JobStatus) error
	}{
		{"Remove", refuseUnfinished},
		{"Retry", refuseUnretryable},
	}
	statuses := []struct {
		name string
		st   *JobStatus
	}{
		{"no status", nil},
		{"queued", &JobStatus{State: Queued, Seq: 1}},
		{"running", &JobStatus{State: Running, Seq: 2, PID: 1, Host: "h"}},
	}
	for _, r := range refusals {
		for _, s := range statuses {
			t.Run(r.name+"/"+s.name, func(t *testing.T) {
				dir := submitQueued(t)
				jd, err := openJobDir("test", dir)
				require.NoError(t, err)
				t.Cleanup(func() { _ = jd.Close() })
				require.ErrorIs(t, r.refuse("test", jd, s.st), ErrWrongState)
			})
		}
	}
}
