package jobstore_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/internal/proc"
	"github.com/stretchr/testify/require"
)

// claimerRole reads commands ("claim|DIR|N", "fence|DIR|N" or
// "lockclaim|DIR|N", which takes job.lock first and keeps it) from stdin
// and answers each with "won", "lost" or "err ...", so that several
// processes (on two mounts: two hosts) race the same claim or fence on the
// parent's word. The attempt layer's own tests race it within one mount.
const claimerRole = "claimer"

func init() { roles[claimerRole] = claimer }

func claimer() int {
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		op, rest, _ := strings.Cut(in.Text(), "|")
		dir, nstr, _ := strings.Cut(rest, "|")
		n, _ := strconv.ParseUint(nstr, 10, 64)
		var won bool
		var err error
		switch op {
		case "claim":
			_, err = jobstore.ClaimAttempt(jobstore.JobDir(dir), n)
			won = err == nil
			if errors.Is(err, jobstore.ErrLocked) {
				err = nil
			}
		case "fence":
			won, err = jobstore.FenceAttempt(jobstore.JobDir(dir), n)
		case "lockclaim": // as Start does: job.lock first, held until the process ends
			if _, err = jobstore.LockJob(jobstore.JobDir(dir)); err == nil {
				_, err = jobstore.ClaimAttempt(jobstore.JobDir(dir), n)
				won = err == nil
			}
		}
		switch {
		case err != nil:
			fmt.Println("err", strings.ReplaceAll(err.Error(), "\n", " "))
		case won:
			fmt.Println("won")
		default:
			fmt.Println("lost")
		}
	}
	return 0
}

func TestClaimAttempt_NotAJob(t *testing.T) {
	_, err := jobstore.ClaimAttempt(jobstore.JobDir(filepath.Join(tempDir(t), "nope")), 1)
	require.ErrorIs(t, err, jobstore.ErrNotJob)
}

// The attempt directories must never look like jobs, records or temp files.
func TestAttempts_DirectoriesAreInvisibleToScansAndSweeps(t *testing.T) {
	root := tempDir(t)
	dir, err := jobstore.Submit(root, jobstore.JobSpec{ID: "j", Kind: "k"})
	require.NoError(t, err)
	_, err = jobstore.ClaimAttempt(dir, 1)
	require.NoError(t, err)
	_, err = jobstore.FenceAttempt(dir, 1)
	require.NoError(t, err)
	_, err = jobstore.ClaimAttempt(dir, 2)
	require.NoError(t, err)
	for _, name := range []string{".run-2", ".fenced-1", ".run-12345", ".fenced-7"} {
		require.False(t, jobstore.IsTempName(name), name)
	}
	old := time.Now().Add(-time.Hour)
	for _, p := range []string{jobstore.RunDirPath(dir, 2), jobstore.FencedDirPath(dir, 1)} {
		require.NoError(t, os.Chtimes(p, old, old))
	}
	swept, err := jobstore.SweepTemps(dir, 0)
	require.NoError(t, err)
	require.Empty(t, swept)
	entries, err := jobstore.List(root)
	require.NoError(t, err)
	require.Len(t, entries, 1)
	require.NoError(t, entries[0].Err)
}

// Start writes no lease: the claim counts as the first renewal, and the
// lease file appears at the first renewal a third of a lease later, which
// an observer on another host sees as a change (alive), never as a lease
// left unchanged. The owner is named by the running record itself.
func TestStart_FirstRenewalIsSeenAsAliveByAnotherHost(t *testing.T) {
	dir, err := jobstore.Submit(tempDir(t), jobstore.JobSpec{ID: "j", Kind: "k"})
	require.NoError(t, err)
	const lease = 600 * time.Millisecond
	run, err := jobstore.Start(dir, jobstore.WithHost("hostA"), jobstore.WithLease(lease))
	require.NoError(t, err)
	t.Cleanup(func() { _ = run.Close() })
	leaseFile := filepath.Join(jobstore.RunDirPath(dir, 1), jobstore.LeaseName)
	require.NoFileExists(t, leaseFile, "Start writes no lease of its own")
	st, err := jobstore.ReadStatus(dir)
	require.NoError(t, err)
	require.Equal(t, lease, st.Lease, "the running record names the owner's lease")
	require.Equal(t, "hostA", st.Host)

	deadline := time.Now().Add(time.Minute)
	for {
		verdict, why, err := jobstore.JudgeAttempt(dir, 1, "hostB", time.Hour)
		require.NoError(t, err)
		require.NotEqual(t, "gone", verdict, why)
		if verdict == "alive" {
			break
		}
		require.True(t, time.Now().Before(deadline), "never seen alive: %s", why)
		time.Sleep(lease / 20)
	}
	require.FileExists(t, leaseFile, "the first renewal wrote the lease")
	require.NoError(t, run.Progress(1, "done"), "the runner still owns its job")
}

// A queued job at the largest seq cannot be cancelled by writing (seq
// never wraps): RequestCancel refuses, naming seq, and the record stays.
func TestRequestCancel_AtTheLargestSeqIsRefusedNotWrapped(t *testing.T) {
	dir, err := jobstore.Submit(tempDir(t), jobstore.JobSpec{ID: "j", Kind: "k"})
	require.NoError(t, err)
	require.NoError(t, jobstore.WriteStatus(dir, jobstore.JobStatus{State: jobstore.Queued, Seq: math.MaxUint64}))
	before := readFile(t, dir.StatusPath())
	err = jobstore.RequestCancel(dir, jobstore.CancelRequest{RequestedBy: "t"})
	require.ErrorIs(t, err, jobstore.ErrInvalid)
	var e *jobstore.Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, "seq", e.Subject)
	require.Equal(t, string(before), string(readFile(t, dir.StatusPath())), "the record must stay as it was")
	require.NoDirExists(t, jobstore.RunDirPath(dir, 1), "the canceller's claim is withdrawn")
}

// Start racing RequestCancel: whenever Start fails, the request that was
// already published is the reason it gives (ErrCancelRequested), never the
// canceller's job.lock (ErrLocked); a Start that won sees the request
// through its Context.
func TestStart_RacingRequestCancelNamesTheRequest(t *testing.T) {
	root := tempDir(t)
	for i := range 200 {
		dir, err := jobstore.Submit(root, jobstore.JobSpec{ID: fmt.Sprintf("j%d", i), Kind: "k"})
		require.NoError(t, err)
		var wg sync.WaitGroup
		var cerr error
		wg.Go(func() { cerr = jobstore.RequestCancel(dir, jobstore.CancelRequest{RequestedBy: "t"}) })
		r, err := jobstore.Start(dir)
		wg.Wait()
		require.NoError(t, cerr)
		if err != nil {
			require.ErrorIs(t, err, jobstore.ErrCancelRequested, "round %d", i)
			continue
		}
		select {
		case <-r.Context().Done():
		case <-time.After(time.Minute):
			t.Fatalf("round %d: the runner never saw the request", i)
		}
		require.ErrorIs(t, context.Cause(r.Context()), jobstore.ErrCancelRequested)
		require.NoError(t, r.Close())
	}
}

// TestStart_LockedSaysWhoHoldsTheAttemptAndHowItWasJudged: a Start refused
// because attempt 1's runner may be alive names that runner's pid and host
// (this one, or another) and how it was judged (this host's process table,
// or a lease not yet watched for a whole lease), never "another host" for
// this one.
func TestStart_LockedSaysWhoHoldsTheAttemptAndHowItWasJudged(t *testing.T) {
	here, err := jobstore.HostID()
	require.NoError(t, err)
	cases := []struct {
		name       string
		host       string
		pid        int
		start      string
		want       []string
		notWanting string
	}{
		{"this host, alive", here, os.Getpid(), proc.SelfStart(),
			[]string{fmt.Sprintf("attempt 1 is held by its runner, pid %d on this host (%s), judged alive: this host's process table", os.Getpid(), here)},
			"another host"},
		{"another host, lease not yet judged", "render-elsewhere", 4242, "1",
			[]string{"attempt 1 is held by its runner, pid 4242 on host render-elsewhere, not yet judged (it may be alive): its lease"},
			"this host"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := submitJob(t, "j")
			run := filepath.Join(string(dir), ".run-1")
			require.NoError(t, os.Mkdir(run, 0o755))
			writeFile(t, filepath.Join(run, "lease"), []byte("1"))
			st := readStatus(t, dir)
			st.State, st.Seq, st.Attempt, st.Host, st.PID, st.PIDScope, st.PIDStart = jobstore.Running, 2, 1, c.host, c.pid, proc.Scope(), c.start
			writeRecord(t, dir.StatusPath(), st)

			_, err := jobstore.Start(dir)
			require.ErrorIs(t, err, jobstore.ErrLocked)
			for _, w := range c.want {
				require.Contains(t, err.Error(), w)
			}
			require.NotContains(t, err.Error(), c.notWanting)
		})
	}
}
