// The end-to-end two-host tests: one jobs root seen through the two mounts
// of each filesystem of the kit (twohost_kit_linux_test.go), used by
// processes that claim two host identities. Where locks do not reach across,
// without the claim, lease and fence, they fail: a job run twice, a live
// runner marked lost, a terminal record overwritten with seq going back.

package jobstore_test

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/internal/prereq"
	"github.com/stretchr/testify/require"
)

// twoHostLease is the lease of the runners in these tests where the other
// mount sees a change at once: short, so that the tests take seconds, long
// enough to be renewed on a loaded machine. twoHostLeaseFor lengthens it
// for a filesystem whose clients cache.
const twoHostLease = 1500 * time.Millisecond

// leaseEnv passes the kit's lease (twoHosts.Lease) to a child role.
const leaseEnv = "LEASE"

// childLease is the lease a child role was given in $LEASE.
func childLease() time.Duration {
	d, err := time.ParseDuration(os.Getenv(leaseEnv))
	if err != nil {
		panic(fmt.Sprintf("a two-host child role needs %s: %v", leaseEnv, err))
	}
	return d
}

// twoHostRunnerRole starts $JOB with lease $LEASE and reports progress
// every $EVERY until stdin says "finish" or a write fails; it prints
// "started", then "progress-err notowner|other: ..." or "finished".
const twoHostRunnerRole = "twohost-runner"

// twoHostStarterRole tries Start on each job of $JOBS (space-separated dirs)
// once with lease $LEASE, holds every run it got, prints "won <id>" for
// each, then "done", and waits for stdin to close.
const twoHostStarterRole = "twohost-starter"

func init() {
	roles[twoHostRunnerRole] = twoHostRunner
	roles[twoHostStarterRole] = twoHostStarter
}

func twoHostRunner() int {
	dir := jobstore.JobDir(os.Getenv("JOB"))
	every, _ := time.ParseDuration(os.Getenv("EVERY"))
	if wait, _ := time.ParseDuration(os.Getenv("WAIT_IN_START")); wait > 0 {
		jobstore.SetStartBegun(func(string) { fmt.Println("begun"); time.Sleep(wait) })
	}
	r, err := jobstore.Start(dir, jobstore.WithLease(childLease()))
	if err != nil {
		fmt.Println("err", err)
		return 1
	}
	defer r.Close()
	fmt.Println("started")
	finish := make(chan struct{})
	go func() {
		in := bufio.NewScanner(os.Stdin)
		for in.Scan() {
			if in.Text() == "finish" {
				close(finish)
				return
			}
		}
	}()
	for i := 0; ; i++ {
		select {
		case <-finish:
			if err := r.Finish(jobstore.Outcome{State: jobstore.Succeeded}); err != nil {
				fmt.Println("finish-err", err)
				return 1
			}
			fmt.Println("finished")
			return 0
		case <-time.After(every):
		}
		if err := r.Progress(float64(i%100)/100, "working"); err != nil {
			kind := "other"
			if errors.Is(err, jobstore.ErrNotOwner) {
				kind = "notowner"
			}
			fmt.Printf("progress-err %s: %v\n", kind, strings.ReplaceAll(err.Error(), "\n", " "))
			return 0
		}
	}
}

func twoHostStarter() int {
	var runs []*jobstore.Run
	for _, d := range strings.Fields(os.Getenv("JOBS")) {
		r, err := jobstore.Start(jobstore.JobDir(d), jobstore.WithLease(childLease()))
		if err == nil {
			runs = append(runs, r)
			fmt.Println("won", filepath.Base(d))
		}
	}
	fmt.Println("done")
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	for _, r := range runs {
		_ = r.Close()
	}
	return 0
}

// watchSeq polls dir's status until stop and fails the test if seq goes
// back or a terminal state is followed by anything else.
func watchSeq(t *testing.T, dir jobstore.JobDir, stop <-chan struct{}) *sync.WaitGroup {
	t.Helper()
	var wg sync.WaitGroup
	wg.Go(func() {
		var last jobstore.JobStatus
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
			st, err := jobstore.ReadStatus(dir)
			if err != nil || st == nil {
				continue
			}
			if st.Seq < last.Seq {
				t.Errorf("watcher: seq went back from %d (%s) to %d (%s)", last.Seq, last.State, st.Seq, st.State)
			}
			if last.State.Terminal() && st.Seq != last.Seq {
				t.Errorf("watcher: terminal %s (seq %d) replaced by %s (seq %d)", last.State, last.Seq, st.State, st.Seq)
			}
			last = *st
		}
	})
	return &wg
}

// 8 processes, 4 through each mount as two hosts, race Start on 50 jobs:
// each job must have exactly one runner. Where locks are forwarded, job.lock
// decides first and the attempt still holds.
func TestTwoHosts_StartRaceOneRunnerPerJob(t *testing.T) {
	prereq.Long(t, "runners on two mounts race for each job, about 20 s")
	forEachTwoHosts(t, func(t *testing.T, h *twoHosts) {
		ids := submitQueued(t, h.A, "j", 50)
		var kids []*child
		for i := range 8 {
			mnt, host := h.A, "hostA"
			if i%2 == 1 {
				mnt, host = h.B, "hostB"
			}
			kids = append(kids, startRole(t, twoHostStarterRole, jobstore.HostEnv+"="+host, "JOBS="+pathsUnder(mnt, ids), leaseEnv+"="+h.Lease.String()))
		}
		runners := map[string]int{}
		for _, k := range kids {
			for {
				line := k.line(t)
				if line == "done" {
					break
				}
				runners[strings.TrimPrefix(line, "won ")]++
			}
		}
		twice := 0
		for _, id := range ids {
			if runners[id] != 1 {
				twice++
				t.Errorf("job %s has %d runners", id, runners[id])
			}
		}
		t.Logf("%d of %d jobs ran more than once", twice, len(ids))
	})
}

// A live runner on A reporting progress; reconcilers loop on B for 3 lease
// periods: the job is never marked lost.
func TestTwoHosts_LiveRunnerIsNeverMarkedLostFromTheOtherHost(t *testing.T) {
	forEachTwoHosts(t, func(t *testing.T, h *twoHosts) {
		dirB, w := runningOnA(t, h)
		stop := make(chan struct{})
		wg := watchSeq(t, dirB, stop)
		t.Setenv(jobstore.HostEnv, "hostB")
		deadline := time.Now().Add(3 * h.Lease)
		for time.Now().Before(deadline) {
			changed, err := jobstore.Reconcile(dirB)
			require.NoError(t, err)
			if changed {
				t.Errorf("a reconciler on host B marked the live runner's job lost")
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		fmt.Fprintln(w.stdin, "finish")
		require.Equal(t, "finished", w.line(t), "the runner must finish its own job")
		close(stop)
		wg.Wait()
	})
}

// A runner SIGKILLed on A is marked lost by a reconciler on B within the
// lease bound.
func TestTwoHosts_KilledRunnerIsReconciledFromTheOtherHostWithinTheLease(t *testing.T) {
	forEachTwoHosts(t, func(t *testing.T, h *twoHosts) {
		dirB, w := runningOnA(t, h)
		require.NoError(t, w.cmd.Process.Kill())
		_ = w.cmd.Wait()
		t.Setenv(jobstore.HostEnv, "hostB")
		killed := time.Now()
		for {
			changed, err := jobstore.Reconcile(dirB)
			require.NoError(t, err)
			if changed {
				break
			}
			// A deadlock guard, generous: the bound is one lease plus one poll.
			require.Less(t, time.Since(killed), 10*h.Lease, "never reconciled")
			time.Sleep(50 * time.Millisecond)
		}
		st, err := jobstore.ReadStatus(dirB)
		require.NoError(t, err)
		require.Equal(t, jobstore.Lost, st.State)
	})
}

// A runner on A is stopped past its lease while a Python poller and a
// watcher on B look on. Where locks do not reach across, B takes the job
// over and finishes it, then A is resumed: A's next write fails with
// ErrNotOwner and B's record stands. Where locks are forwarded, the stopped
// runner's job.lock keeps its job (B's Start is ErrLocked throughout), and
// resumed, it goes on and finishes. Either way the watchers never see seq
// go back or a terminal state replaced.
func TestTwoHosts_StoppedRunnerIsTakenOverOnlyWhereLocksDoNotReach(t *testing.T) {
	forEachTwoHosts(t, func(t *testing.T, h *twoHosts) {
		dirB, w := runningOnA(t, h)
		stop := make(chan struct{})
		wg := watchSeq(t, dirB, stop)
		py := startSeedPoller(t, dirB)
		time.Sleep(300 * time.Millisecond)
		require.NoError(t, w.cmd.Process.Signal(syscall.SIGSTOP))
		t.Cleanup(func() { _ = w.cmd.Process.Signal(syscall.SIGCONT) })
		t.Setenv(jobstore.HostEnv, "hostB")
		var final *jobstore.JobStatus
		if h.LocksForwarded {
			final = stoppedRunnerKeepsItsJob(t, h, dirB, w)
		} else {
			final = stoppedRunnerIsTakenOver(t, h, dirB, w)
		}
		close(stop)
		wg.Wait()
		seqs := py(final.Seq)
		require.NotEmpty(t, seqs)
		require.Equal(t, final.Seq, seqs[len(seqs)-1], "the Python poller ends on the final record")
	})
}

// stoppedRunnerIsTakenOver: B takes the stopped runner's job over and
// finishes it; the resumed runner learns it from its next write. It
// returns B's final record.
func stoppedRunnerIsTakenOver(t *testing.T, h *twoHosts, dirB jobstore.JobDir, w *child) *jobstore.JobStatus {
	t.Helper()
	var r *jobstore.Run
	var err error
	stopped := time.Now()
	for {
		r, err = jobstore.Start(dirB)
		if errors.Is(err, jobstore.ErrWrongState) {
			break // taken over: the stopped runner's attempt, the job's only one, ended lost
		}
		if err == nil {
			_ = r.Close()
			t.Fatal("host B ran the job again: the stopped runner's attempt was its only one")
		}
		require.ErrorIs(t, err, jobstore.ErrLocked)
		require.Less(t, time.Since(stopped), 10*h.Lease, "never taken over")
		time.Sleep(50 * time.Millisecond)
	}
	final, err := jobstore.ReadStatus(dirB)
	require.NoError(t, err)
	require.Equal(t, jobstore.Lost, final.State)

	require.NoError(t, w.cmd.Process.Signal(syscall.SIGCONT))
	time.Sleep(500 * time.Millisecond) // five of the runner's progress periods
	st, err := jobstore.ReadStatus(dirB)
	require.NoError(t, err)
	require.Equal(t, final.Seq, st.Seq, "host B's final record must stand; the resumed runner wrote %s seq %d over it", st.State, st.Seq)
	require.Equal(t, jobstore.Lost, st.State)
	line := w.line(t)
	require.True(t, strings.HasPrefix(line, "progress-err notowner"), "the resumed runner's next write must fail with ErrNotOwner; it said %q", line)
	return final
}

// stoppedRunnerKeepsItsJob: B's Start is ErrLocked for three leases while
// the runner is stopped (its flock reaches B); resumed, the runner goes on
// and finishes its job. It returns the runner's final record.
func stoppedRunnerKeepsItsJob(t *testing.T, h *twoHosts, dirB jobstore.JobDir, w *child) *jobstore.JobStatus {
	t.Helper()
	for deadline := time.Now().Add(3 * h.Lease); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		r, err := jobstore.Start(dirB)
		if err == nil {
			_ = r.Close()
			t.Fatal("host B started a job whose stopped runner holds job.lock through a filesystem that forwards locks")
		}
		require.ErrorIs(t, err, jobstore.ErrLocked)
		changed, err := jobstore.Reconcile(dirB)
		require.NoError(t, err)
		require.False(t, changed, "a reconciler on host B marked the job of a stopped runner that holds job.lock lost")
	}
	require.NoError(t, w.cmd.Process.Signal(syscall.SIGCONT))
	time.Sleep(500 * time.Millisecond) // five of the runner's progress periods
	fmt.Fprintln(w.stdin, "finish")
	require.Equal(t, "finished", w.line(t), "the resumed runner must go on with its job, which nobody took over")
	final, err := jobstore.ReadStatus(jobstore.JobDir(filepath.Join(h.Server, "j1")))
	require.NoError(t, err)
	require.Equal(t, jobstore.Succeeded, final.State, "the runner's own final record")
	return final
}

// submitQueued submits n queued jobs named prefix00, prefix01, ... under
// root and returns their IDs.
func submitQueued(t *testing.T, root, prefix string, n int) []string {
	t.Helper()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s%02d", prefix, i)
		_, err := jobstore.Submit(root, jobstore.JobSpec{ID: ids[i], Kind: "k"})
		require.NoError(t, err)
	}
	return ids
}

// pathsUnder is the job directories of ids under mnt, as one
// space-separated list for a child's environment.
func pathsUnder(mnt string, ids []string) string {
	var b strings.Builder
	for _, id := range ids {
		b.WriteString(filepath.Join(mnt, id) + " ")
	}
	return b.String()
}

// runningOnA submits job j1 and starts a runner of it on host A, through
// mount A, with the kit's lease, reporting progress every 100 ms; it returns
// the job as host B sees it and the runner.
func runningOnA(t *testing.T, h *twoHosts) (jobstore.JobDir, *child) {
	t.Helper()
	dirB, err := jobstore.Submit(h.B, jobstore.JobSpec{ID: "j1", Kind: "k"})
	require.NoError(t, err)
	w := startRole(t, twoHostRunnerRole, jobstore.HostEnv+"=hostA", "JOB="+filepath.Join(h.A, "j1"), "EVERY=100ms", leaseEnv+"="+h.Lease.String())
	require.Equal(t, "started", w.line(t))
	return dirB, w
}
