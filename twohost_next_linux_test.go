// Workers on two hosts pull jobs from one root with StartNext: one root
// seen through the two mounts of the kit (twohost_kit_linux_test.go), whose
// lock tables are independent, by processes that claim two host
// identities.

package jobstore_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/internal/prereq"
	"github.com/stretchr/testify/require"
)

// nextWorkerRole runs StartNext on $ROOT in a loop until stdin closes. For
// each job it appends a line "HOST PID" to the job's starts.log (O_APPEND:
// every start leaves its line, whoever else writes), then, unless $HOLD is
// set, finishes it succeeded. It prints "started ID" for each job; with
// $HOLD it holds the first job it starts and takes no other.
const nextWorkerRole = "next-worker"

// startsLog is where a test job's every start is recorded.
const startsLog = "starts.log"

func init() { roles[nextWorkerRole] = nextWorker }

func nextWorker() int {
	root := os.Getenv("ROOT")
	host := os.Getenv(jobstore.HostEnv)
	hold := os.Getenv("HOLD") != ""
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
		cancel()
	}()
	out := bufio.NewWriter(os.Stdout)
	for {
		r, err := jobstore.StartNext(ctx, root, jobstore.WithScanInterval(100*time.Millisecond), jobstore.WithLease(childLease()))
		if err != nil {
			if ctx.Err() == nil {
				fmt.Fprintln(out, "err", strings.ReplaceAll(err.Error(), "\n", " "))
			}
			out.Flush()
			return 0
		}
		f, err := os.OpenFile(filepath.Join(string(r.Dir()), startsLog), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err == nil {
			_, err = fmt.Fprintf(f, "%s %d\n", host, os.Getpid())
			err = errors.Join(err, f.Close())
		}
		if err != nil {
			fmt.Fprintln(out, "err", err)
		}
		fmt.Fprintln(out, "started", r.Dir().ID())
		out.Flush()
		if hold {
			<-ctx.Done()
			return 0
		}
		if err := r.Finish(jobstore.Outcome{State: jobstore.Succeeded}); err != nil {
			fmt.Fprintln(out, "err", strings.ReplaceAll(err.Error(), "\n", " "))
		}
		_ = r.Close()
	}
}

// nextWorkers starts n workers of root, alternately through mounts A and B
// as hostA and hostB.
func nextWorkers(t *testing.T, h *twoHosts, n int, env ...string) []*child {
	t.Helper()
	var kids []*child
	for i := range n {
		mnt, host := h.A, "hostA"
		if i%2 == 1 {
			mnt, host = h.B, "hostB"
		}
		kids = append(kids, startRole(t, nextWorkerRole, append(env, jobstore.HostEnv+"="+host, "ROOT="+mnt, "LEASE="+h.Lease.String())...))
	}
	return kids
}

// stopWorkers closes the workers' stdin and returns every line they
// printed after.
func stopWorkers(t *testing.T, kids []*child) []string {
	t.Helper()
	var lines []string
	for _, k := range kids {
		require.NoError(t, k.stdin.Close())
		sc := bufio.NewScanner(k.out)
		for sc.Scan() {
			lines = append(lines, sc.Text())
		}
		require.NoError(t, k.cmd.Wait())
	}
	return lines
}

// startsOf returns the lines of a job's starts.log (none if absent).
func startsOf(t *testing.T, dir string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, startsLog))
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// 8 workers, 4 through each mount as two hosts, drain 500 jobs, half of
// them submitted while they run (through either mount): every job is
// started exactly once, and succeeds.
func TestTwoHosts_EightWorkersDrain500JobsEachStartedOnce(t *testing.T) {
	prereq.Long(t, "eight workers drain 500 jobs on two mounts, about 5 minutes, most of it on GlusterFS")
	forEachTwoHosts(t, func(t *testing.T, h *twoHosts) {
		const jobs = 500
		ids := make([]string, jobs)
		for i := range jobs / 2 {
			ids[i] = fmt.Sprintf("early%03d", i)
			_, err := jobstore.Submit(h.A, jobstore.JobSpec{ID: ids[i], Kind: "k"})
			require.NoError(t, err)
		}
		kids := nextWorkers(t, h, 8)
		for i := jobs / 2; i < jobs; i++ {
			ids[i] = fmt.Sprintf("late%03d", i)
			mnt := h.A
			if i%2 == 1 {
				mnt = h.B
			}
			_, err := jobstore.Submit(mnt, jobstore.JobSpec{ID: ids[i], Kind: "k"})
			require.NoError(t, err)
		}
		deadline := time.Now().Add(5 * time.Minute) // a hang guard
		for {
			var open []string // the jobs not ended, and how they stand
			for _, id := range ids {
				st, err := jobstore.ReadStatus(jobstore.JobDir(filepath.Join(h.Server, id)))
				switch {
				case err != nil:
					open = append(open, fmt.Sprintf("%s: %v", id, err))
				case st == nil:
					open = append(open, id+": no status")
				case !st.State.Terminal():
					open = append(open, fmt.Sprintf("%s: %s, attempt %d, pid %d on %q, seq %d", id, st.State, st.Attempt, st.PID, st.Host, st.Seq))
				}
			}
			if len(open) == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d of %d jobs did not end: %s\nthe workers said:\n%s", len(open), jobs,
					strings.Join(open, "; "), strings.Join(stopWorkers(t, kids), "\n"))
			}
			time.Sleep(100 * time.Millisecond)
		}
		lines := stopWorkers(t, kids)
		started := map[string]int{}
		for _, l := range lines {
			if id, ok := strings.CutPrefix(l, "started "); ok {
				started[id]++
			} else {
				t.Errorf("a worker said: %s", l)
			}
		}
		hosts := map[string]int{}
		for _, id := range ids {
			dir := filepath.Join(h.Server, id)
			starts := startsOf(t, dir)
			require.Len(t, starts, 1, "job %s was started %d times: %v", id, len(starts), starts)
			require.Equal(t, 1, started[id], "job %s reported started %d times", id, started[id])
			hosts[strings.Fields(starts[0])[0]]++
			require.Equal(t, jobstore.Succeeded, readStatus(t, jobstore.JobDir(dir)).State)
		}
		t.Logf("jobs run per host: %v", hosts)
	})
}

// A worker SIGKILLed mid-job on host A: while other workers on both hosts
// keep pulling jobs, a reconciler on host B marks its job lost, and nobody
// runs it again.
func TestTwoHosts_KilledWorkersJobIsLostAndNeverRunAgain(t *testing.T) {
	forEachTwoHosts(t, func(t *testing.T, h *twoHosts) {
		_, err := jobstore.Submit(h.A, jobstore.JobSpec{ID: "victim", Kind: "k"})
		require.NoError(t, err)
		holder := startRole(t, nextWorkerRole, jobstore.HostEnv+"=hostA", "ROOT="+h.A, "HOLD=1", "LEASE="+h.Lease.String())
		require.Equal(t, "started victim", holder.line(t))
		others := nextWorkers(t, h, 4)

		require.NoError(t, holder.cmd.Process.Signal(syscall.SIGKILL))
		_ = holder.cmd.Wait()
		t.Setenv(jobstore.HostEnv, "hostB")
		victim := jobstore.JobDir(filepath.Join(h.B, "victim"))
		killed := time.Now()
		for {
			changed, err := jobstore.Reconcile(victim)
			require.NoError(t, err)
			if changed {
				break
			}
			require.Less(t, time.Since(killed), 10*h.Lease, "never reconciled") // a hang guard
			time.Sleep(50 * time.Millisecond)
		}
		require.Equal(t, jobstore.Lost, readStatus(t, victim).State)

		// The workers are alive and pulling: a job submitted now is run.
		_, err = jobstore.Submit(h.A, jobstore.JobSpec{ID: "after", Kind: "k"})
		require.NoError(t, err)
		waitGuarded(t, "the job submitted after to end", func() bool {
			st, err := jobstore.ReadStatus(jobstore.JobDir(filepath.Join(h.Server, "after")))
			return err == nil && st != nil && st.State.Terminal()
		})
		lines := stopWorkers(t, others)
		require.NotContains(t, lines, "started victim")
		require.Len(t, startsOf(t, filepath.Join(h.Server, "victim")), 1, "the lost job ran again")
		require.Equal(t, jobstore.Lost, readStatus(t, victim).State)
	})
}

// waitGuarded polls cond until it holds, failing after waitGuard.
func waitGuarded(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitGuard)
	for !cond() {
		require.True(t, time.Now().Before(deadline), "waited %v for %s", waitGuard, what)
		time.Sleep(20 * time.Millisecond)
	}
}

// A worker idle in StartNext on mount B, as host B, sees jobs submitted
// through mount A by its scan alone (no event crosses mounts), however the
// mounts cache attributes. Logged, not asserted: the latency of each of 20
// submissions against the scan interval plus 100 ms.
func TestTwoHosts_StartNextFindsTheOtherHostsSubmissionsByItsScan(t *testing.T) {
	forEachTwoHosts(t, func(t *testing.T, h *twoHosts) {
		const scan = 200 * time.Millisecond
		k := startRole(t, latencyWorkerRole, jobstore.HostEnv+"=hostB", "ROOT="+h.B, "SCAN="+scan.String())
		lat := startLatencies(t, k, h.A, 20, false)
		t.Logf("Submit through mount A -> StartNext through mount B, scan %v: p50 %v, p90 %v, max %v (scan + 100 ms = %v)",
			scan, quantile(lat, 0.5), quantile(lat, 0.9), lat[len(lat)-1], scan+100*time.Millisecond)
	})
}
