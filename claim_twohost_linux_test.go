package jobstore_test

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/require"
)

// The ownership primitives, proved across the two mounts of the kit.

func TestTwoHosts_ClaimAndFenceRacesAcrossMounts(t *testing.T) {
	forEachTwoHosts(t, func(t *testing.T, h *twoHosts) {
		kids := []*child{
			startRole(t, claimerRole, jobstore.HostEnv+"=hostA"), startRole(t, claimerRole, jobstore.HostEnv+"=hostA"),
			startRole(t, claimerRole, jobstore.HostEnv+"=hostB"), startRole(t, claimerRole, jobstore.HostEnv+"=hostB"),
		}
		for i := range 20 {
			id := fmt.Sprintf("j%d", i)
			dirB, err := jobstore.Submit(h.B, jobstore.JobSpec{ID: id, Kind: "k"})
			require.NoError(t, err)
			onMount := func(k int) jobstore.JobDir {
				if k < 2 {
					return jobstore.JobDir(filepath.Join(h.A, id))
				}
				return dirB
			}
			require.Equal(t, 1, raceAttemptOn(t, kids, onMount, 2, "claim", dirB, 1), "round %d: claims", i)
			require.Equal(t, 1, raceAttemptOn(t, kids, onMount, 2, "fence", dirB, 1), "round %d: fences", i)
		}
	})
}

// fencedWriterRole claims attempt 1 of $JOB (through its own mount), renews
// its lease ($LEASE), and on each line from stdin writes a running status,
// answering "ok", "notowner" or "err ...". "write" checks the lease by the
// writer's own clock first; "raw" does not, so only the fence can stop it.
const fencedWriterRole = "fenced-writer"

func init() { roles[fencedWriterRole] = fencedWriter }

func fencedWriter() int {
	dir := jobstore.JobDir(os.Getenv("JOB"))
	lease, err := time.ParseDuration(os.Getenv("LEASE"))
	if err != nil {
		fmt.Println("err", err)
		return 1
	}
	host, _ := jobstore.HostID()
	o, err := jobstore.ClaimAsOwner(dir, 1, lease)
	if err != nil {
		fmt.Println("err", err)
		return 1
	}
	defer o.Close()
	fmt.Println("claimed")
	in := bufio.NewScanner(os.Stdin)
	for seq := uint64(2); in.Scan(); seq++ {
		var err error
		if in.Text() != "raw" {
			if err = o.Check(); err != nil {
				err = fmt.Errorf("%w: %w", jobstore.ErrNotOwner, err)
			}
		}
		if err == nil {
			err = o.Write(jobstore.JobStatus{State: jobstore.Running, Seq: seq, PID: os.Getpid(), Host: host, Lease: lease})
		}
		switch {
		case errors.Is(err, jobstore.ErrNotOwner):
			fmt.Println("notowner")
		case err != nil:
			fmt.Println("err", err)
		default:
			fmt.Println("ok")
		}
	}
	return 0
}

// judgeUntil looks at attempt n of dir from host every poll until the
// verdict is want, and fails the test if it never is, or is ever what
// must not be.
func judgeUntil(t *testing.T, dir jobstore.JobDir, n uint64, host string, poll time.Duration, want, never string) string {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		v, why, err := jobstore.JudgeAttempt(dir, n, host, time.Minute)
		require.NoError(t, err)
		require.NotEqual(t, never, v, why)
		if v == want {
			return why
		}
		require.True(t, time.Now().Before(deadline), "never %s: %s", want, why)
		time.Sleep(poll)
	}
}

// A writer on A is stopped past its lease; B judges it gone by its own
// clock, fences it and writes lost. Resumed, the writer's next write fails
// with ErrNotOwner, through A's cached view of the directory, and B's
// record stands.
func TestTwoHosts_StoppedWriterIsFencedFromTheOtherMount(t *testing.T) {
	forEachTwoHosts(t, func(t *testing.T, h *twoHosts) {
		// Short, so that B judges the writer in a few lease periods; on a
		// caching filesystem longer by the same rule as the runners'.
		lease := 600*time.Millisecond + h.Lease - twoHostLease
		dirB, err := jobstore.Submit(h.B, jobstore.JobSpec{ID: "j1", Kind: "k"})
		require.NoError(t, err)
		w := startRole(t, fencedWriterRole, jobstore.HostEnv+"=hostA", "JOB="+filepath.Join(h.A, "j1"), "LEASE="+lease.String())
		require.Equal(t, "claimed", w.line(t))
		fmt.Fprintln(w.stdin, "write")
		require.Equal(t, "ok", w.line(t))

		judgeUntil(t, dirB, 1, "hostB", lease/10, "alive", "gone")

		require.NoError(t, w.cmd.Process.Signal(syscall.SIGSTOP))
		t.Cleanup(func() { _ = w.cmd.Process.Signal(syscall.SIGCONT) })
		judgeUntil(t, dirB, 1, "hostB", lease/10, "gone", "")
		won, err := jobstore.FenceAttempt(dirB, 1)
		require.NoError(t, err)
		require.True(t, won)
		last, err := jobstore.ReadStatus(dirB)
		require.NoError(t, err)
		now := jobstore.Now()
		require.NoError(t, jobstore.WriteStatus(dirB, jobstore.JobStatus{State: jobstore.Lost, Seq: last.Seq + 1, FinishedAt: &now}))

		require.NoError(t, w.cmd.Process.Signal(syscall.SIGCONT))
		fmt.Fprintln(w.stdin, "raw") // no self-check: the fence alone must stop it
		require.Equal(t, "notowner", w.line(t))
		fmt.Fprintln(w.stdin, "write")
		require.Equal(t, "notowner", w.line(t))
		st, err := jobstore.ReadStatus(jobstore.JobDir(filepath.Join(h.Server, "j1")))
		require.NoError(t, err)
		require.Equal(t, jobstore.Lost, st.State, "the fencer's record must stand")
		require.Equal(t, last.Seq+1, st.Seq)
	})
}

// raceAttemptOn runs op ("claim" or "fence") on attempt n of dir from
// goroutines in this process and from the children at once, child i working
// on kidDir(i) (the same job seen through another mount), and returns how
// many won.
func raceAttemptOn(t *testing.T, kids []*child, kidDir func(i int) jobstore.JobDir, goroutines int, op string, dir jobstore.JobDir, n uint64) int {
	t.Helper()
	var mu sync.Mutex
	won := 0
	start := make(chan struct{})
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			<-start
			var ok bool
			var err error
			if op == "claim" {
				_, err = jobstore.ClaimAttempt(dir, n)
				ok = err == nil
				if errors.Is(err, jobstore.ErrLocked) {
					err = nil
				}
			} else {
				ok, err = jobstore.FenceAttempt(dir, n)
			}
			if err != nil {
				t.Errorf("%s: %v", op, err)
			}
			if ok {
				mu.Lock()
				won++
				mu.Unlock()
			}
		})
	}
	for i, k := range kids {
		_, err := fmt.Fprintf(k.stdin, "%s|%s|%d\n", op, kidDir(i), n)
		require.NoError(t, err)
	}
	close(start)
	wg.Wait()
	for _, k := range kids {
		switch ans := k.line(t); ans {
		case "won":
			won++
		case "lost":
		default:
			t.Fatalf("child: %s", ans)
		}
	}
	return won
}
