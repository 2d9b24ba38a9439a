package jobstore_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/axqua/jobstore"
)

// The torn-read test's knobs.
const (
	tornReaderProcs      = 3      // reader processes
	tornReaderGoroutines = 2      // reader goroutines in each process, and in the test itself
	tornWrites           = 200    // atomic writes checked per run
	tornWritesRace       = 50     // under -race, whose slow readers starve the writer
	tornControlMaxWrites = 50_000 // in-place writes the control may take to show a tear
	tornMinSize          = 1 << 10
	tornMaxSize          = 64 << 10
	windowsReadPause     = 50 * time.Millisecond // between two reads of one reader, on Windows only
	tornReaderRole       = "torn-reader"
	tornReaderPathEnv    = "JOBSTORE_TORN_PATH"
	tornReadyLine        = "ready"
	tornTornLine         = "torn"   // a reader's first invalid read, reported at once
	tornCountsPrefix     = "counts" // a reader's totals, reported when its stdin closes
)

// readCounts is what spinning readers saw.
type readCounts struct {
	reads    int64
	invalid  int64 // read, but not valid JSON (empty or partial): a torn file
	notFound int64
	busy     int64 // Windows only: open refused for a moment while MoveFileEx replaces the file
	errs     int64 // any other failure to read
}

func (c *readCounts) add(o readCounts) {
	c.reads += o.reads
	c.invalid += o.invalid
	c.notFound += o.notFound
	c.busy += o.busy
	c.errs += o.errs
}

func (c readCounts) String() string {
	return fmt.Sprintf("%d reads, %d invalid, %d not found, %d busy, %d other errors", c.reads, c.invalid, c.notFound, c.busy, c.errs)
}

// spinRead reads path the way a naive poller in any language would (open,
// read all, close, parse; no retry), as fast as it can until stop, and
// calls onTorn at each invalid read.
func spinRead(path string, stop *atomic.Bool, onTorn func()) readCounts {
	var c readCounts
	for !stop.Load() {
		c.reads++
		data, err := os.ReadFile(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			c.notFound++
		case isSharingError(err):
			c.busy++
		case err != nil:
			c.errs++
		case !json.Valid(data):
			c.invalid++
			onTorn()
		}
		if runtime.GOOS == "windows" {
			// A reader without FILE_SHARE_DELETE (every os.Open) blocks
			// the replace while it holds the file; readers that never let
			// go would starve the writer past its retry budget.
			time.Sleep(windowsReadPause)
		} else {
			// Let the writer goroutine run: spinning readers would
			// otherwise hold every P of the test process until preemption.
			runtime.Gosched()
		}
	}
	return c
}

// tornReader is the reader child: tornReaderGoroutines spinning readers of
// the file named by tornReaderPathEnv, until its stdin closes. It prints
// tornReadyLine when reading, tornTornLine at its first torn read, and its
// totals at the end.
func tornReader() int {
	path := os.Getenv(tornReaderPathEnv)
	var stop atomic.Bool
	var once sync.Once
	var out sync.Mutex
	say := func(line string) {
		out.Lock()
		defer out.Unlock()
		fmt.Println(line)
	}
	onTorn := func() { once.Do(func() { say(tornTornLine) }) }
	var total readCounts
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range tornReaderGoroutines {
		wg.Go(func() {
			c := spinRead(path, &stop, onTorn)
			mu.Lock()
			total.add(c)
			mu.Unlock()
		})
	}
	say(tornReadyLine)
	_, _ = io.Copy(io.Discard, os.Stdin) // the parent closes stdin to stop us
	stop.Store(true)
	wg.Wait()
	say(fmt.Sprintf("%s %d %d %d %d %d", tornCountsPrefix, total.reads, total.invalid, total.notFound, total.busy, total.errs))
	return 0
}

// tornRun is what the readers of one run saw.
type tornRun struct {
	procs, goroutines readCounts
	procTorn          bool // a reader process saw a torn file
	goroutineTorn     bool // a reader goroutine of the test saw a torn file
	writes            int
}

// withTornReaders starts the reader processes and goroutines on path, runs
// write once they are all reading, stops them and returns their counts.
// write gets a function that reports whether both a reader process and a
// reader goroutine have seen a torn file (the control stops there), and
// returns how many writes it made.
func withTornReaders(t *testing.T, path string, write func(bothTorn func() bool) int) tornRun {
	t.Helper()
	var run tornRun
	var procTorn, goroutineTorn atomic.Bool

	type reader struct {
		cmd    *exec.Cmd
		stdin  io.WriteCloser
		counts chan readCounts
	}
	var readers []reader
	var ready sync.WaitGroup
	for range tornReaderProcs {
		cmd := childCommand(t, tornReaderRole, tornReaderPathEnv+"="+path)
		stdin, err := cmd.StdinPipe()
		require.NoError(t, err)
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		startChild(t, cmd)
		r := reader{cmd, stdin, make(chan readCounts, 1)}
		readers = append(readers, r)
		ready.Add(1)
		go func() {
			sc := bufio.NewScanner(stdout)
			readySeen := false
			var c readCounts
			for sc.Scan() {
				switch line := sc.Text(); {
				case line == tornReadyLine:
					readySeen = true
					ready.Done()
				case line == tornTornLine:
					procTorn.Store(true)
				case strings.HasPrefix(line, tornCountsPrefix):
					_, err := fmt.Sscanf(line, tornCountsPrefix+" %d %d %d %d %d", &c.reads, &c.invalid, &c.notFound, &c.busy, &c.errs)
					if err != nil {
						c = readCounts{errs: -1}
					}
				}
			}
			if !readySeen {
				ready.Done() // died early; its missing counts fail the test
			}
			r.counts <- c
		}()
	}
	ready.Wait()

	var stop atomic.Bool
	var mu sync.Mutex
	var wg sync.WaitGroup
	stopGoroutines := func() {
		stop.Store(true)
		wg.Wait()
	}
	defer stopGoroutines() // also when write fails the test
	for range tornReaderGoroutines {
		wg.Go(func() {
			c := spinRead(path, &stop, func() { goroutineTorn.Store(true) })
			mu.Lock()
			run.goroutines.add(c)
			mu.Unlock()
		})
	}
	run.writes = write(func() bool { return procTorn.Load() && goroutineTorn.Load() })
	stopGoroutines()
	for i, r := range readers {
		require.NoError(t, r.stdin.Close())
		c := <-r.counts
		require.NoError(t, r.cmd.Wait(), "reader process %d", i)
		require.Positive(t, c.reads, "reader process %d reported no reads", i)
		run.procs.add(c)
	}
	require.Positive(t, run.goroutines.reads, "the reader goroutines made no reads")
	run.procTorn, run.goroutineTorn = procTorn.Load(), goroutineTorn.Load()
	return run
}

// tornText is random letters, from which tornStatus cuts its messages
// (cheaply: the writer must spend its time writing, not making data).
var tornText = func() string {
	const letters = "abcdefghijklmnopqrstuvwxyz "
	b := make([]byte, 2*tornMaxSize)
	for i := range b {
		b[i] = letters[rand.N(len(letters))]
	}
	return string(b)
}()

// tornStatus is a status whose JSON is about size bytes (1-64 KiB): the
// message is a random stretch of tornText.
func tornStatus(seq uint64, size int) jobstore.JobStatus {
	n := max(size-200, 1)
	at := rand.N(len(tornText) - n)
	return jobstore.JobStatus{State: jobstore.Running, Seq: seq, Message: tornText[at : at+n]}
}

func tornSize() int { return tornMinSize + rand.N(tornMaxSize-tornMinSize+1) }

// newTornJob makes a job whose status.json exists before any reader starts
// (a missing status.json is "nothing has run yet", not what this test is
// about).
func newTornJob(t *testing.T) jobstore.JobDir {
	t.Helper()
	dir := jobstore.JobDir(filepath.Join(tempDir(t), "job-torn"))
	require.NoError(t, jobstore.WriteSpec(dir, jobstore.JobSpec{ID: dir.ID(), Kind: "torn-test"}))
	require.NoError(t, jobstore.WriteStatus(dir, tornStatus(0, tornSize())))
	return dir
}

// TestWriteStatus_ReaderNeverSeesPartialFile: while WriteStatus rewrites
// status.json tornWrites times (tornWritesRace under -race) with statuses of
// random sizes (1-64 KiB), reader processes and goroutines that read it with plain os.ReadFile and
// json.Valid, without retry, never see an invalid (empty or partial) file
// and never find it missing. On Windows a read may be refused for a moment
// (sharing violation, access denied) while MoveFileEx replaces the file;
// ReadStatus retries those, and they are counted as busy here. On Windows the
// readers also pause windowsReadPause between reads: every os.Open there
// blocks the replace while it holds the file, and readers that never let go
// would starve the writer past its retry budget (real pollers read about
// once a second).
//
// TestWriteStatus_TornReadDetectorWorks is its control: the same readers
// must catch an in-place writer.
func TestWriteStatus_ReaderNeverSeesPartialFile(t *testing.T) {
	writes := tornWrites
	if raceDetector {
		writes = tornWritesRace
	}
	dir := newTornJob(t)
	began := time.Now()
	run := withTornReaders(t, dir.StatusPath(), func(func() bool) int {
		for i := 1; i <= writes; i++ {
			require.NoError(t, jobstore.WriteStatus(dir, tornStatus(uint64(i), tornSize())))
		}
		return writes
	})
	all := run.procs
	all.add(run.goroutines)
	t.Logf("%d atomic writes of 1-64 KiB in %v; reader processes: %v; reader goroutines: %v",
		run.writes, time.Since(began).Round(time.Millisecond), run.procs, run.goroutines)
	require.Zero(t, all.invalid, "readers saw a torn status.json: %v", all)
	require.Zero(t, all.notFound, "readers found status.json missing: %v", all)
	require.Zero(t, all.errs, "readers failed to read status.json: %v", all)
	st, err := jobstore.ReadStatus(dir)
	require.NoError(t, err)
	require.Equal(t, uint64(writes), st.Seq)
}

// TestWriteStatus_TornReadDetectorWorks proves the readers above can see a
// torn file: with a writer that rewrites status.json in place
// (os.WriteFile: truncate, then write), both a reader process and a reader
// goroutine must see an invalid read within tornControlMaxWrites writes.
func TestWriteStatus_TornReadDetectorWorks(t *testing.T) {
	dir := newTornJob(t)
	began := time.Now()
	run := withTornReaders(t, dir.StatusPath(), func(bothTorn func() bool) int {
		n := 0
		for n < tornControlMaxWrites && !bothTorn() {
			n++
			data, err := json.MarshalIndent(tornStatus(uint64(n), tornSize()), "", "  ")
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(dir.StatusPath(), append(data, '\n'), 0o644))
		}
		return n
	})
	t.Logf("control: %d in-place writes in %v until both kinds of reader saw a tear; reader processes: %v; reader goroutines: %v",
		run.writes, time.Since(began).Round(time.Millisecond), run.procs, run.goroutines)
	require.True(t, run.procTorn, "no reader process saw the in-place writer's torn file in %d writes: the detector is blind", run.writes)
	require.True(t, run.goroutineTorn, "no reader goroutine saw the in-place writer's torn file in %d writes: the detector is blind", run.writes)
}
