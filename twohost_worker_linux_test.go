// Workers on two hosts run the jobs of one root seen through the two mounts
// of the kit (twohost_kit_linux_test.go): a worker killed mid-job on one
// host is rescued by a Worker on the other with no reconcile command, and
// jobs that fail at random are retried by their policy, each attempt run
// once and never before its backoff is due.

package jobstore_test

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/internal/prereq"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// kitWorkerRole runs a Worker of $ROOT (lease $LEASE, scan $SCAN, $PARALLEL
// jobs at once) until stdin closes, then stops it and prints "stopped" (or
// "err ..." if Run failed). Its handler appends lines to $LOG, a file
// outside the root, each in one write (O_APPEND):
//
//	start ID ATTEMPT HOST CLOCK STARTED_AT   when it begins
//	end ID ATTEMPT RESULT CLOCK              when its work is over
//	retry ID ATTEMPT RETRY_AT                after it failed the attempt itself
//
// CLOCK is this host's clock (Unix ns), STARTED_AT the attempt's started_at
// as Start recorded it, RETRY_AT the retry_at of the queued record its
// Finish wrote (0: none). RESULT is "ok" (returns nil), "fail-return"
// (returns an error: the Worker fails the attempt) or "fail-finish" (calls
// Finish(Failed) itself). An attempt fails at random with probability
// $FAIL, each way half the time. An attempt whose number is $HOLD is held
// until its context ends, and prints "started ID ATTEMPT" on stdout when it
// begins; every other start prints it too.
const kitWorkerRole = "kit-worker"

func init() { roles[kitWorkerRole] = kitWorker }

// kitWorkerWork bounds the random time a kit worker's handler works: enough
// that attempts of different jobs interleave across the workers.
const kitWorkerWork = 5 * time.Millisecond

func kitWorker() int {
	root, host := os.Getenv("ROOT"), os.Getenv(jobstore.HostEnv)
	scan, err := time.ParseDuration(os.Getenv("SCAN"))
	if err != nil {
		scan = workerScan
	}
	parallel, err := strconv.Atoi(os.Getenv("PARALLEL"))
	if err != nil {
		parallel = 1
	}
	failP, _ := strconv.ParseFloat(os.Getenv("FAIL"), 64)
	hold, _ := strconv.ParseUint(os.Getenv("HOLD"), 10, 64)
	logf, err := os.OpenFile(os.Getenv("LOG"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		fmt.Println("err", err)
		return 1
	}
	defer logf.Close()
	var outMu sync.Mutex
	say := func(format string, args ...any) {
		outMu.Lock()
		defer outMu.Unlock()
		fmt.Printf(format+"\n", args...)
	}
	logLine := func(format string, args ...any) {
		if _, err := logf.WriteString(fmt.Sprintf(format, args...) + "\n"); err != nil { // one write: one line
			say("err log: %v", err)
		}
	}
	h := func(ctx context.Context, run *jobstore.Run) error {
		st := run.Status()
		id := run.Dir().ID()
		logLine("start %s %d %s %d %d", id, st.Attempt, host, time.Now().UnixNano(), st.StartedAt.UnixNano())
		say("started %s %d", id, st.Attempt)
		if st.Attempt == hold {
			<-ctx.Done() // until killed
			return context.Cause(ctx)
		}
		time.Sleep(rand.N(kitWorkerWork))
		fail := rand.Float64() < failP
		switch {
		case !fail:
			logLine("end %s %d ok %d", id, st.Attempt, time.Now().UnixNano())
			return nil
		case rand.N(2) == 0:
			logLine("end %s %d fail-return %d", id, st.Attempt, time.Now().UnixNano())
			return fmt.Errorf("attempt %d failed at random", st.Attempt)
		}
		logLine("end %s %d fail-finish %d", id, st.Attempt, time.Now().UnixNano())
		if err := run.Finish(jobstore.Outcome{State: jobstore.Failed, Error: fmt.Sprintf("attempt %d failed at random", st.Attempt)}); err != nil {
			say("err finish %s: %s", id, strings.ReplaceAll(err.Error(), "\n", " "))
			return err
		}
		var due int64
		if q := run.Status(); q.State == jobstore.Queued && q.RetryAt != nil {
			due = q.RetryAt.UnixNano()
		}
		logLine("retry %s %d %d", id, st.Attempt, due)
		return nil
	}
	w, err := jobstore.NewWorker(root, h, jobstore.WithParallel(parallel),
		jobstore.WithStartOptions(jobstore.WithLease(childLease()), jobstore.WithScanInterval(scan)),
		jobstore.WithLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))))
	if err != nil {
		fmt.Println("err", err)
		return 1
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
		cancel()
	}()
	if err := w.Run(ctx); err != nil {
		say("err run: %s", strings.ReplaceAll(err.Error(), "\n", " "))
		return 1
	}
	say("stopped")
	return 0
}

// startKitWorker starts a kit worker of mount mnt as host, with extra env.
func startKitWorker(t *testing.T, h *twoHosts, mnt, host, log string, env ...string) *child {
	t.Helper()
	return startRole(t, kitWorkerRole, append([]string{jobstore.HostEnv + "=" + host, "ROOT=" + mnt, leaseEnv + "=" + h.Lease.String(),
		"LOG=" + log}, env...)...)
}

// handlerLine is one line of a kit worker's handler log.
type handlerLine struct {
	what    string // start, end, retry
	id      string
	attempt uint64
	host    string    // start
	result  string    // end
	clock   time.Time // start, end
	at      time.Time // start: started_at; retry: retry_at (zero: none)
}

// readHandlerLog parses a kit workers' handler log.
func readHandlerLog(t *testing.T, path string) []handlerLine {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	ns := func(s string) time.Time {
		n, err := strconv.ParseInt(s, 10, 64)
		require.NoError(t, err, "a clock in the handler log: %q", s)
		if n <= 0 {
			return time.Time{}
		}
		return time.Unix(0, n)
	}
	var lines []handlerLine
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(l)
		require.GreaterOrEqual(t, len(f), 4, "a line of the handler log: %q", l)
		a, err := strconv.ParseUint(f[2], 10, 64)
		require.NoError(t, err, "a line of the handler log: %q", l)
		hl := handlerLine{what: f[0], id: f[1], attempt: a}
		switch {
		case f[0] == "start" && len(f) == 6:
			hl.host, hl.clock, hl.at = f[3], ns(f[4]), ns(f[5])
		case f[0] == "end" && len(f) == 5:
			hl.result, hl.clock = f[3], ns(f[4])
		case f[0] == "retry" && len(f) == 4:
			hl.at = ns(f[3])
		default:
			t.Fatalf("a line of the handler log: %q", l)
		}
		lines = append(lines, hl)
	}
	return lines
}

// stopKitWorkers closes the workers' stdin, waits for them, and fails the
// test if one said anything but "started ..." and "stopped".
func stopKitWorkers(t *testing.T, kids ...*child) (started []string) {
	t.Helper()
	for _, l := range stopWorkers(t, kids) {
		switch {
		case strings.HasPrefix(l, "started "):
			started = append(started, strings.TrimPrefix(l, "started "))
		case l != "stopped":
			t.Errorf("a worker said: %s", l)
		}
	}
	return started
}

// serverStatus reads a job's status from the server's copy, the truth.
func serverStatus(t *testing.T, h *twoHosts, id string) (*jobstore.JobStatus, error) {
	t.Helper()
	return jobstore.ReadStatus(jobstore.JobDir(filepath.Join(h.Server, id)))
}

// A worker on host A is SIGKILLed in the middle of two jobs. A Worker on
// host B, which watched A renew its leases and left its jobs alone while A
// lived, takes both over with no reconcile command: the job with an
// attempt left runs again on B and ends succeeded at attempt 2, after the
// first attempt's handler died (the handlers' own log, kept outside the
// root, has their clocks); the job with max_attempts 1 ends lost, never
// run again.
func TestTwoHosts_WorkerRescuesAKilledWorkersJob(t *testing.T) {
	forEachTwoHosts(t, func(t *testing.T, h *twoHosts) {
		log := filepath.Join(tempDir(t), "handlers.log") // outside the root
		_, err := jobstore.Submit(h.A, jobstore.JobSpec{ID: "retried", Kind: "k", MaxAttempts: 2, Backoff: 50 * time.Millisecond})
		require.NoError(t, err)
		_, err = jobstore.Submit(h.A, jobstore.JobSpec{ID: "once", Kind: "k", MaxAttempts: 1})
		require.NoError(t, err)

		a := startKitWorker(t, h, h.A, "hostA", log, "HOLD=1", "PARALLEL=2")
		require.ElementsMatch(t, []string{"started retried 1", "started once 1"}, []string{a.line(t), a.line(t)})
		b := startKitWorker(t, h, h.B, "hostB", log, "PARALLEL=2")

		// While A lives, B's rescue passes see its leases renewed and
		// leave its jobs alone, for longer than a lease.
		for deadline := time.Now().Add(h.Lease * 3 / 2); time.Now().Before(deadline); time.Sleep(workerScan) {
			for _, id := range []string{"retried", "once"} {
				st, err := serverStatus(t, h, id)
				require.NoError(t, err)
				require.Equal(t, jobstore.Running, st.State, "%s: a live runner's job was taken over: %+v", id, st)
				require.Equal(t, uint64(1), st.Attempt, id)
			}
		}
		require.NoError(t, a.cmd.Process.Signal(syscall.SIGKILL))
		_ = a.cmd.Wait()
		killed := time.Now() // A's handlers ended before this

		var retried, once *jobstore.JobStatus
		waitGuarded(t, "B to rescue both jobs", func() bool {
			retried, _ = serverStatus(t, h, "retried")
			once, _ = serverStatus(t, h, "once")
			return retried != nil && retried.State.Terminal() && once != nil && once.State.Terminal()
		})
		started := stopKitWorkers(t, b)

		// Attempts are counted by the outcomes the status keeps; their
		// numbers are the claims', and B's takeover of the lost attempt
		// claimed one of its own.
		require.Equal(t, jobstore.Succeeded, retried.State, "%+v", retried)
		require.Len(t, retried.Attempts, 2, "the lost attempt, then the one that succeeded: %+v", retried.Attempts)
		lost, second := retried.Attempts[0], retried.Attempts[1]
		assert.Equal(t, jobstore.Lost, lost.State)
		assert.Equal(t, uint64(1), lost.Attempt)
		assert.Equal(t, "hostA", lost.Host)
		assert.Equal(t, jobstore.Succeeded, second.State)
		assert.Greater(t, second.Attempt, lost.Attempt)
		assert.Equal(t, second.Attempt, retried.Attempt)
		assert.Equal(t, "hostB", second.Host)
		assert.Equal(t, []string{fmt.Sprint("retried ", second.Attempt)}, started, "B ran the retried job's second attempt, and nothing else")

		assert.Equal(t, jobstore.Lost, once.State, "max_attempts 1: lost, as a reconcile would leave it")
		assert.Empty(t, once.Attempts, "one attempt: today's record")

		var got []string
		var start2 time.Time
		for _, l := range readHandlerLog(t, log) {
			got = append(got, fmt.Sprintf("%s %s %d", l.what, l.id, l.attempt))
			if l.what == "start" && l.id == "retried" && l.attempt == second.Attempt {
				start2 = l.clock
				assert.Equal(t, "hostB", l.host)
				assert.True(t, l.at.Equal(*second.StartedAt), "the handler ran the attempt the record keeps")
			}
		}
		assert.ElementsMatch(t, []string{"start retried 1", "start once 1", fmt.Sprint("start retried ", second.Attempt), fmt.Sprint("end retried ", second.Attempt)}, got,
			"each attempt's handler ran once; the lost job never ran again")
		require.False(t, start2.IsZero(), "no handler ran the second attempt")
		assert.True(t, start2.After(killed), "the second attempt's handler began %v before the first one's was killed", killed.Sub(start2))
	})
}

// 300 jobs whose handler fails at random 30% of the time, max_attempts 5,
// run by 8 Workers, 4 on each host, each through its own mount. Every job
// ends (succeeded, or failed after its 5th failure); the attempts its
// status keeps are those its handlers ran, each run once and one after the
// other; and no attempt started before its retry was due on the clock the
// handlers read (one machine, one clock): exactly its retry_at where the
// handler that failed the attempt before read it from the record it wrote,
// else the earliest retry_at the policy can draw.
func TestTwoHosts_WorkersRetryFailingJobsEachAttemptOnceAndNotBeforeItsBackoff(t *testing.T) {
	prereq.Long(t, "workers on two mounts retry 300 failing jobs, about 1 minute")
	forEachTwoHosts(t, func(t *testing.T, h *twoHosts) {
		const (
			jobs        = 300
			workers     = 8
			maxAttempts = 5
			backoff     = 20 * time.Millisecond
			maxBackoff  = 100 * time.Millisecond
		)
		log := filepath.Join(tempDir(t), "handlers.log") // outside the root
		spec := func(id string) jobstore.JobSpec {
			return jobstore.JobSpec{ID: id, Kind: "k", MaxAttempts: maxAttempts, Backoff: backoff, MaxBackoff: maxBackoff}
		}
		ids := make([]string, jobs)
		submit := func(i int) {
			ids[i] = fmt.Sprintf("job%03d", i)
			mnt := h.A
			if i%2 == 1 {
				mnt = h.B
			}
			_, err := jobstore.Submit(mnt, spec(ids[i]))
			require.NoError(t, err)
		}
		for i := range jobs / 2 {
			submit(i)
		}
		var kids []*child
		for i := range workers {
			mnt, host := h.A, "hostA"
			if i%2 == 1 {
				mnt, host = h.B, "hostB"
			}
			kids = append(kids, startKitWorker(t, h, mnt, host, log, "FAIL=0.3"))
		}
		for i := jobs / 2; i < jobs; i++ { // the rest while they run
			submit(i)
		}

		final := map[string]*jobstore.JobStatus{}
		deadline := time.Now().Add(5 * time.Minute) // a hang guard
		for {
			var open []string
			for _, id := range ids {
				if final[id] != nil {
					continue
				}
				st, err := serverStatus(t, h, id)
				switch {
				case err != nil:
					open = append(open, fmt.Sprintf("%s: %v", id, err))
				case st == nil || !st.State.Terminal():
					open = append(open, fmt.Sprintf("%s: %+v", id, st))
				default:
					final[id] = st
				}
			}
			if len(open) == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d of %d jobs did not end: %s\nthe workers said: %v", len(open), jobs, strings.Join(open, "; "), stopKitWorkers(t, kids...))
			}
			time.Sleep(100 * time.Millisecond)
		}
		stopKitWorkers(t, kids...)

		type key struct {
			id string
			n  uint64
		}
		starts, ends, retryAt := map[key]handlerLine{}, map[key]handlerLine{}, map[key]time.Time{}
		for _, l := range readHandlerLog(t, log) {
			k := key{l.id, l.attempt}
			switch l.what {
			case "start":
				_, twice := starts[k]
				require.False(t, twice, "attempt %d of %s ran twice", l.attempt, l.id)
				starts[k] = l
			case "end":
				ends[k] = l
			case "retry":
				if !l.at.IsZero() {
					retryAt[k] = l.at
				}
			}
		}
		// The earliest retry_at the policy draws after the nth failure:
		// half its delay after the failure's end, less the microsecond
		// records are truncated to.
		earliest := func(ended time.Time, n uint64) time.Time {
			d := min(backoff<<(n-1), maxBackoff)
			return ended.Add(d/2 - time.Microsecond)
		}
		outcomes, exact, bound := map[jobstore.State]int{}, 0, 0
		total := 0
		for _, id := range ids {
			st := final[id]
			outcomes[st.State]++
			require.NotEmpty(t, st.Attempts, "%s: the attempts are recorded", id)
			require.Equal(t, st.Attempt, st.Attempts[len(st.Attempts)-1].Attempt, id)
			// An attempt's number is its claim's: a Start that claimed a
			// number and then lost the job to another runner leaves a gap.
			// The attempts are counted by the outcomes kept.
			for i, a := range st.Attempts {
				n := a.Attempt
				k := key{id, n}
				total++
				if i > 0 {
					require.Greater(t, n, st.Attempts[i-1].Attempt, "%s: attempts in the order they ran: %+v", id, st.Attempts)
				}
				start, ok := starts[k]
				require.True(t, ok, "%s: attempt %d is recorded but no handler ran it", id, n)
				end, ok := ends[k]
				require.True(t, ok, "%s: attempt %d's handler never ended", id, n)
				require.NotNil(t, a.StartedAt)
				require.True(t, a.StartedAt.Equal(start.at), "%s attempt %d: the record's started_at %v, the handler's %v", id, n, a.StartedAt, start.at)
				if end.result == "ok" {
					require.Equal(t, jobstore.Succeeded, a.State, "%s attempt %d", id, n)
					require.Equal(t, len(st.Attempts), i+1, "%s: an attempt after the one that succeeded", id)
				} else {
					require.Equal(t, jobstore.Failed, a.State, "%s attempt %d", id, n)
					require.Contains(t, a.Error, "failed at random")
				}
				if i == 0 {
					continue
				}
				prev := st.Attempts[i-1]
				prevEnd := ends[key{id, prev.Attempt}]
				require.True(t, start.clock.After(prevEnd.clock), "%s: attempt %d's handler began before attempt %d's ended", id, n, prev.Attempt)
				low := earliest(prev.EndedAt, uint64(i)) // after the ith failure
				require.False(t, start.at.Before(low), "%s: attempt %d started at %v, before the earliest its backoff allows after attempt %d ended (%v): %v early",
					id, n, start.at, prev.Attempt, low, low.Sub(start.at))
				if due, ok := retryAt[key{id, prev.Attempt}]; ok {
					exact++
					require.False(t, due.Before(low), "%s: retry_at %v after attempt %d, earlier than its policy allows (%v)", id, due, prev.Attempt, low)
					require.False(t, start.at.Before(due), "%s: attempt %d started at %v, %v before its retry_at %v", id, n, start.at, due.Sub(start.at), due)
					require.False(t, start.clock.Before(due), "%s: attempt %d's handler began %v before its retry_at", id, n, due.Sub(start.clock))
				} else {
					bound++
				}
			}
			if st.State == jobstore.Failed {
				require.Len(t, st.Attempts, maxAttempts, "%s failed before its last attempt: %+v", id, st.Attempts)
			} else {
				require.Equal(t, jobstore.Succeeded, st.State, "%s: %+v", id, st)
			}
		}
		require.Len(t, starts, total, "every handler run is an attempt the records keep")
		require.Positive(t, exact, "some retries were checked against their exact retry_at")
		t.Logf("%d jobs, %d attempts: %v; retries checked against retry_at %d, against the policy's earliest %d; attempts per host: %v",
			jobs, total, outcomes, exact, bound, startsPerHost(starts))
	})
}

// startsPerHost counts the handler starts by host.
func startsPerHost[K comparable](starts map[K]handlerLine) map[string]int {
	m := map[string]int{}
	for _, s := range starts {
		m[s.host]++
	}
	return m
}
