package jobstore_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/require"
)

// setClaimedAt rewrites owner.json's claimed_at: an owner host whose clock
// is far off.
func setClaimedAt(t *testing.T, run, when string) {
	t.Helper()
	path := filepath.Join(run, "owner.json")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	m["claimed_at"] = when
	b, err = json.Marshal(m)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, b, 0o644))
}

// Another host judges the owner by watching its lease with its own clock:
// alive while renewed, gone a lease after renewal stopped, whatever the
// owner's clock wrote.
func TestJudgeAttempt_OtherHostByLeaseClockSkewIrrelevant(t *testing.T) {
	const lease = 300 * time.Millisecond
	for _, claimedAt := range []string{"", "1990-01-01T00:00:00.000000+00:00", "2990-01-01T00:00:00.000000+00:00"} {
		t.Run("claimed_at="+claimedAt, func(t *testing.T) {
			dir, err := jobstore.Submit(tempDir(t), jobstore.JobSpec{ID: "j", Kind: "k"})
			require.NoError(t, err)
			run, err := jobstore.ClaimAttempt(dir, 1, lease, "hostA")
			require.NoError(t, err)
			if claimedAt != "" {
				setClaimedAt(t, run, claimedAt)
			}
			r, err := jobstore.StartRenewer(dir, 1, lease)
			require.NoError(t, err)
			ctx := context.Background()
			for range 3 {
				v, why, err := jobstore.JudgeAttempt(ctx, dir, 1, "hostB", time.Minute, lease/10)
				require.NoError(t, err)
				require.Equal(t, "alive", v, why)
			}
			r.Stop()
			stopped := time.Now()
			// A renewal written just before Stop may still be seen as a
			// change by the first look (alive, rightly); after that the lease
			// stays as it is and the next look must find the owner gone.
			v, why, err := jobstore.JudgeAttempt(ctx, dir, 1, "hostB", time.Minute, lease/10)
			require.NoError(t, err)
			if v == "alive" {
				v, why, err = jobstore.JudgeAttempt(ctx, dir, 1, "hostB", time.Minute, lease/10)
				require.NoError(t, err)
			}
			require.Equal(t, "gone", v, why)
			require.GreaterOrEqual(t, time.Since(stopped), lease, "judged gone before a whole lease of no change")
		})
	}
}

// On the owner's own host the process table answers at once: this process
// is alive even with its lease stopped.
func TestJudgeAttempt_SameHostByPid(t *testing.T) {
	switch runtime.GOOS {
	case "linux", "darwin", "windows":
	default:
		t.Skip("no process start time on " + runtime.GOOS + ": the lease alone decides there")
	}
	dir, err := jobstore.Submit(tempDir(t), jobstore.JobSpec{ID: "j", Kind: "k"})
	require.NoError(t, err)
	_, err = jobstore.ClaimAttempt(dir, 1, time.Hour, "hostA")
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	v, why, err := jobstore.JudgeAttempt(ctx, dir, 1, "hostA", time.Hour, time.Second)
	require.NoError(t, err)
	require.Equal(t, "alive", v, why)
}

// owner.json is written in place, so a judge may catch it incomplete: it
// then judges the claimant by its lease (the judge's own, the owner's being
// unreadable), never by a pid it cannot read. Here the claimant is this
// live process on this host, which the pid would call alive at once; with
// owner.json torn and no renewal, the lease alone decides, and it is
// unchanged for the whole fallback lease.
func TestJudgeAttempt_TornOwnerRecordIsJudgedByTheLease(t *testing.T) {
	dir, err := jobstore.Submit(tempDir(t), jobstore.JobSpec{ID: "j", Kind: "k"})
	require.NoError(t, err)
	run, err := jobstore.ClaimAttempt(dir, 1, time.Hour, "hostA")
	require.NoError(t, err)
	owner := filepath.Join(run, "owner.json")
	whole, err := os.ReadFile(owner)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(owner, whole[:len(whole)/2], 0o644))

	const fallback = 300 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	v, why, err := jobstore.JudgeAttempt(ctx, dir, 1, "hostA", fallback, 20*time.Millisecond)
	require.NoError(t, err)
	require.Equal(t, "gone", v, why)
	require.Contains(t, why, fallback.String(), "the judge's own lease applies when owner.json cannot be read")
}

func TestJudgeAttempt_OverAndNoClaim(t *testing.T) {
	dir, err := jobstore.Submit(tempDir(t), jobstore.JobSpec{ID: "j", Kind: "k"})
	require.NoError(t, err)
	ctx := context.Background()
	v, _, err := jobstore.JudgeAttempt(ctx, dir, 1, "h", time.Hour, time.Second)
	require.NoError(t, err)
	require.Equal(t, "no claim", v)
	_, err = jobstore.ClaimAttempt(dir, 1, time.Hour, "h")
	require.NoError(t, err)
	_, err = jobstore.FenceAttempt(dir, 1)
	require.NoError(t, err)
	v, _, err = jobstore.JudgeAttempt(ctx, dir, 1, "h", time.Hour, time.Second)
	require.NoError(t, err)
	require.Equal(t, "over", v)
}

// Start writes no lease: the claim counts as the first renewal, and the
// lease file appears at the first renewal a third of a lease later, which
// an observer on another host sees as a change (alive), never as a lease
// left unchanged.
func TestStart_FirstRenewalIsSeenAsAliveByAnotherHost(t *testing.T) {
	dir, err := jobstore.Submit(tempDir(t), jobstore.JobSpec{ID: "j", Kind: "k"})
	require.NoError(t, err)
	const lease = 600 * time.Millisecond
	run, err := jobstore.Start(dir, jobstore.WithHost("hostA"), jobstore.WithLease(lease))
	require.NoError(t, err)
	t.Cleanup(func() { _ = run.Close() })
	leaseFile := filepath.Join(jobstore.RunDirPath(dir, 1), "lease")
	require.NoFileExists(t, leaseFile, "Start writes no lease of its own")
	require.FileExists(t, filepath.Join(jobstore.RunDirPath(dir, 1), "owner.json"))

	verdict, why, err := jobstore.JudgeAttempt(context.Background(), dir, 1, "hostB", lease, 20*time.Millisecond)
	require.NoError(t, err)
	require.Equal(t, "alive", verdict, why)
	require.FileExists(t, leaseFile, "the first renewal wrote the lease")
	require.NoError(t, run.Progress(1, "done"), "the runner still owns its job")
}
