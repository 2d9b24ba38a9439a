package jobstore_test

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/internal/prereq"
	"github.com/axqua/jobstore/internal/strace"
	"github.com/stretchr/testify/require"
)

// takeCostRole runs a Worker of $ROOT that finishes each job it takes at
// once. The handler of the $WARM-th job waits for the Worker's first full
// scan of the root to end, prints "warm" and waits for a line
// on stdin (the test attaches strace meanwhile), then stats $MARK+"begin";
// that of the ($WARM+$MEASURED)-th stats $MARK+"end" and stops the Worker:
// the file system calls between the two marks are those of $MEASURED
// whole takes, starts and finishes, after the Worker's first look read the
// backlog.
const takeCostRole = "take-cost"

// takeCostSyscalls are the calls a take, a start and a finish may make on
// the file system: every one is counted, wherever it points.
const takeCostSyscalls = "openat,newfstatat,fstat,statx,getdents64,read,pread64,write,pwrite64,close,mkdirat," +
	"unlinkat,renameat,renameat2,linkat,fsync,fdatasync,flock,fcntl,ftruncate"

func init() {
	roles[takeCostRole] = func() int {
		warm, _ := strconv.Atoi(os.Getenv("WARM"))
		measured, _ := strconv.Atoi(os.Getenv("MEASURED"))
		mark := os.Getenv("MARK")
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var n atomic.Int64
		scanned := make(chan struct{})
		return runWorkerRole(ctx, func(_ context.Context, run *jobstore.Run) error {
			switch n.Add(1) {
			case int64(warm):
				<-scanned // the first full scan, on its own goroutine, is not measured
				fmt.Println("warm")
				_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
				_, _ = os.Stat(mark + "begin")
			case int64(warm + measured):
				_, _ = os.Stat(mark + "end")
				cancel()
			}
			return nil
		}, jobstore.WithViewScanned(func() { close(scanned) }))
	}
}

// runWorkerRole runs a Worker of $ROOT with h and opts until ctx is done,
// and returns a role's exit code.
func runWorkerRole(ctx context.Context, h jobstore.Handler, opts ...jobstore.WorkerOption) int {
	w, err := jobstore.NewWorker(os.Getenv("ROOT"), h, opts...)
	if err == nil {
		err = w.Run(ctx)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// takeCallsPerJob drains measured jobs of a backlog of n queued jobs with a
// Worker, traced by strace once its first look read the backlog, and
// returns the file system calls per job drained, and the opens of a
// job.json per job drained.
func takeCallsPerJob(t *testing.T, straceBin string, n int) (perJob, specOpens float64) {
	t.Helper()
	const warm, measured = 5, 40
	dir := tempDir(t)
	root := filepath.Join(dir, "root")
	writeQueuedJobs(t, root, n)
	mark := filepath.Join(dir, "mark-")
	logFile := filepath.Join(dir, "strace.log")
	k := startRole(t, takeCostRole, "ROOT="+root, "MARK="+mark,
		"WARM="+strconv.Itoa(warm), "MEASURED="+strconv.Itoa(measured))
	require.Equal(t, "warm", k.line(t))
	detach := traceProcess(t, straceBin, k.cmd.Process.Pid, logFile)
	_, err := io.WriteString(k.stdin, "go\n")
	require.NoError(t, err)
	require.NoError(t, k.cmd.Wait())
	calls := detach()
	begin, end := -1, -1
	for i, c := range calls {
		if len(c.Args) > 1 && strings.Contains(c.Args[1], mark+"begin") {
			begin = i
		}
		if len(c.Args) > 1 && strings.Contains(c.Args[1], mark+"end") {
			end = i
		}
	}
	require.True(t, begin >= 0 && end > begin, "the traced worker's marks were not found in order (begin %d, end %d)", begin, end)
	byName := map[string]int{}
	opens := 0
	for _, c := range calls[begin+1 : end] {
		byName[c.Name]++
		if c.Name == "openat" && len(c.Args) > 1 && strings.Contains(c.Args[1], jobstore.SpecFile) {
			opens++
		}
	}
	t.Logf("backlog %d: calls of %d jobs by name: %v", n, measured, byName)
	require.Positive(t, byName["fsync"], "no job was started and finished between the marks")
	return float64(end-begin-1) / measured, float64(opens) / measured
}

// traceProcess attaches strace to every thread of pid, logging the calls
// of takeCostSyscalls to logFile, and returns once it traces them all (it
// skips the test where strace cannot trace). detach stops the tracing, if
// the process has not ended, and returns the calls traced.
func traceProcess(t testing.TB, straceBin string, pid int, logFile string) (detach func() []strace.Call) {
	t.Helper()
	tracer := exec.Command(straceBin, "-f", "-qq", "-e", "trace="+takeCostSyscalls, "-o", logFile, "-p", strconv.Itoa(pid))
	var stderr bytes.Buffer
	tracer.Stdout, tracer.Stderr = &stderr, &stderr
	require.NoError(t, tracer.Start())
	if !waitTraced(t, pid) {
		_ = tracer.Process.Kill()
		_ = tracer.Wait()
		if out := stderr.String(); strings.Contains(out, "ptrace") || strings.Contains(out, "Operation not permitted") {
			prereq.Skip(t, "strace", "strace cannot trace here (ptrace not permitted): "+out)
		}
		t.Fatalf("strace did not attach to process %d: %s", pid, stderr.String())
	}
	return func() []strace.Call {
		_ = tracer.Process.Signal(os.Interrupt) // detaches; strace ends by itself if the process did
		_ = tracer.Wait()
		log, err := os.ReadFile(logFile)
		require.NoError(t, err)
		calls, err := strace.Parse(string(log))
		require.NoError(t, err, stderr.String())
		return calls
	}
}

// attachWait bounds how long strace may take to attach to every thread of
// a process.
const attachWait = 10 * time.Second

// waitTraced reports whether every thread of pid has a tracer, within
// attachWait.
func waitTraced(t testing.TB, pid int) bool {
	t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(attachWait)
	for {
		if allTraced(pid) {
			return true
		}
		select {
		case <-tick.C:
		case <-deadline:
			return false
		}
	}
}

// allTraced reports whether every thread of pid has a tracer.
func allTraced(pid int) bool {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil || len(tasks) == 0 {
		return false
	}
	for _, task := range tasks {
		status, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/status", pid, task.Name()))
		if err != nil || strings.Contains(string(status), "TracerPid:\t0\n") {
			return false
		}
	}
	return true
}

// TestWorker_TakeCostDoesNotGrowWithTheBacklog proves that what a Worker
// does on the file system to take, start and finish a job is the same at a
// backlog of 100 queued jobs as at 10,000: a take reads what changed, not
// every queued job; and that a job's records are read once a job after the
// first scan, by its Start.
func TestWorker_TakeCostDoesNotGrowWithTheBacklog(t *testing.T) {
	straceBin := requireStrace(t)
	// maxExtraCalls is how many more calls per job a backlog 100 times
	// larger may cost: reading LiveDir's names once in a while, whose
	// listing grows with the live jobs, amortised over the takes.
	const maxExtraCalls = 10
	backlogs := []int{100, 1000, 10000}
	perJob := make([]float64, len(backlogs))
	for i, n := range backlogs {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			var specOpens float64
			perJob[i], specOpens = takeCallsPerJob(t, straceBin, n)
			t.Logf("backlog %d: %.1f file system calls per job drained", n, perJob[i])
			// The first full scan read every queued job; the take that picks
			// one trusts that read while the job's directory did not move,
			// and its Start reads the job's records again under job.lock.
			// (A later full scan, every RepairInterval, may read some again
			// on a slow run: well below one more read a job.)
			require.Less(t, specOpens, 1.5, "job.json opens per job drained, after the first scan read the backlog")
		})
	}
	if t.Failed() {
		return
	}
	for i := 1; i < len(backlogs); i++ {
		require.LessOrEqual(t, perJob[i], perJob[0]+maxExtraCalls,
			"a take at a backlog of %d costs %.1f calls per job, at %d %.1f: it grows with the backlog", backlogs[i], perJob[i], backlogs[0], perJob[0])
	}
}

// idleWorkerRole runs a Worker of $ROOT, which holds finished jobs alone,
// and prints "scanned" once its view's first full scan has ended; it runs
// until stdin closes.
const idleWorkerRole = "idle-worker"

func init() {
	roles[idleWorkerRole] = func() int {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			_, _ = io.Copy(io.Discard, os.Stdin)
			cancel()
		}()
		return runWorkerRole(ctx, func(context.Context, *jobstore.Run) error { return nil },
			jobstore.WithViewScanned(func() { fmt.Println("scanned") }))
	}
}

// idleWindow is how long an idle worker is traced.
const idleWindow = 2 * time.Second

// idleSizes are the numbers of finished jobs TestWorker_IdleCostDoesNotGrowWithFinishedJobs
// compares; docs/benchmarks.md's figure is of -idle-sizes=1000,20000.
var idleSizes = flag.String("idle-sizes", "200,2000", "finished jobs under an idle worker, smaller first")

// idleCallsPerSecond runs an idle Worker over a root of n finished jobs
// and returns the file system calls per second it makes, traced over
// idleWindow once its first full scan has ended.
func idleCallsPerSecond(tb *testing.T, straceBin string, n int) float64 {
	tb.Helper()
	dir := tempDir(tb)
	root := filepath.Join(dir, "root")
	spec, st := finishedJob(0)
	writeJobCopies(tb, root, n, "f-", spec, st, false)
	k := startRole(tb, idleWorkerRole, "ROOT="+root)
	require.Equal(tb, "scanned", k.line(tb))
	logFile := filepath.Join(dir, "strace.log")
	detach := traceProcess(tb, straceBin, k.cmd.Process.Pid, logFile)
	<-time.After(idleWindow)
	calls := detach()
	require.NoError(tb, k.stdin.Close())
	require.NoError(tb, k.cmd.Wait())
	return float64(len(calls)) / idleWindow.Seconds()
}

// TestWorker_IdleCostDoesNotGrowWithFinishedJobs proves that an idle
// Worker's file system calls per second, once its first full scan is
// over, are the same over 200 finished jobs as over 2,000: it polls the
// live index and the jobs it holds as running, not the jobs the root
// keeps (those are read again only by the full scan, every
// RepairInterval).
func TestWorker_IdleCostDoesNotGrowWithFinishedJobs(t *testing.T) {
	straceBin := requireStrace(t)
	// maxExtraPerSecond allows for a look or rescue pass more or less in
	// the window (each is a few calls).
	const maxExtraPerSecond = 5
	var sizes []int
	for _, f := range strings.Split(*idleSizes, ",") {
		n, err := strconv.Atoi(f)
		require.NoError(t, err, "-idle-sizes")
		sizes = append(sizes, n)
	}
	require.Len(t, sizes, 2, "-idle-sizes names two sizes")
	rates := make([]float64, len(sizes))
	for i, n := range sizes {
		rates[i] = idleCallsPerSecond(t, straceBin, n)
		t.Logf("%d finished jobs: %.1f file system calls per second idle", n, rates[i])
	}
	require.LessOrEqual(t, rates[1], rates[0]+maxExtraPerSecond,
		"an idle worker over %d finished jobs makes %.1f calls/s, over %d %.1f: it grows with the jobs kept", sizes[1], rates[1], sizes[0], rates[0])
}
