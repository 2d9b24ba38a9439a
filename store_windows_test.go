package jobstore_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/internal/testdir"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/windows"
)

// Timing of the Windows tests. A reader that lets go within the replace
// budget must not make a write fail; one that holds on past it must.
const (
	// readerHold is how long a polling reader keeps status.json open in the
	// "reader closes in time" test: well inside jobstore.ReplaceBudget.
	readerHold = 300 * time.Millisecond
	// lockHold is how long a share-mode-0 handle blocks every other open in
	// the reader test; the reader is given readRetryWindow to get through.
	lockHold        = 100 * time.Millisecond
	readRetryDelay  = 50 * time.Millisecond
	readRetryWindow = 40 // attempts, readRetryDelay apart: 2 s
)

// holdOpen opens path the way Go's os.Open (and most readers) do: sharing
// read and write, not delete, so MoveFileEx cannot replace the file while the
// handle is open.
func holdOpen(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	t.Cleanup(func() { _ = f.Close() })
	return f
}

func TestWriteStatus_ReplaceWaitsForReaderThatClosesInTime(t *testing.T) {
	dir := submitJob(t, "j1")
	reader := holdOpen(t, dir.StatusPath())

	var released atomic.Bool
	go func() {
		time.Sleep(readerHold)
		released.Store(true)
		_ = reader.Close()
	}()

	err := jobstore.WriteStatus(dir, jobstore.JobStatus{State: jobstore.Running, Seq: 2})
	require.NoError(t, err, "a reader that closes within the replace budget must not make the write fail")
	require.True(t, released.Load(),
		"the replace went through while a reader held status.json open without FILE_SHARE_DELETE; "+
			"this test needs the file system to refuse that (NTFS does)")

	st, err := jobstore.ReadStatus(dir)
	require.NoError(t, err)
	assert.Equal(t, jobstore.Running, st.State)
	assert.Equal(t, uint64(2), st.Seq)
	requireNoTempFiles(t, dir)
}

func TestWriteStatus_ReaderHoldingPastBudgetFailsCleanly(t *testing.T) {
	dir := submitJob(t, "j1")
	before, err := os.ReadFile(dir.StatusPath())
	require.NoError(t, err)
	holdOpen(t, dir.StatusPath()) // held until the test ends: longer than any budget

	start := time.Now()
	err = jobstore.WriteStatus(dir, jobstore.JobStatus{State: jobstore.Running, Seq: 2})
	waited := time.Since(start)
	require.Error(t, err, "the replace cannot succeed while the reader holds the file")
	t.Logf("error after %v: %v", waited.Round(time.Millisecond), err)

	var e *jobstore.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, "rename", e.Op)
	assert.Equal(t, dir.StatusPath(), e.Path)
	assert.Contains(t, err.Error(), "another process kept it open")
	assert.Contains(t, err.Error(), "FILE_SHARE_DELETE")
	assert.Contains(t, e.Remedy, "previous record is intact")
	assert.NotContains(t, err.Error(), "..", "one period between the OS error and the remedy")
	assert.True(t, errors.Is(err, windows.ERROR_ACCESS_DENIED) || errors.Is(err, windows.ERROR_SHARING_VIOLATION),
		"the error unwraps to the OS error, got %#v", e.Err)
	assert.GreaterOrEqual(t, waited, jobstore.ReplaceBudget, "the write gave up before its retry budget")

	after, err := os.ReadFile(dir.StatusPath())
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after), "the old status must stay byte-identical")
	requireNoTempFiles(t, dir)
}

// A poller is a child process (this test binary in the role
// windowsPollerRole) that polls a job's status.json until its stdin closes,
// as a GUI or a script in another process would. Another process, not a
// goroutine: goroutines share the Go runtime's timers and threads, so a
// writer goroutine tends to wake up in step with a reader goroutine, which
// no real poller does.
const (
	windowsPollerRole = "windows-poller"
	pollerDirEnv      = "JOBSTORE_TEST_POLLER_DIR"
	pollerModeEnv     = "JOBSTORE_TEST_POLLER_MODE"

	// pollHold: "hold" mode keeps status.json open (os.Open: no
	// FILE_SHARE_DELETE) this long per poll, then lets go for pollGap: a
	// poller that leaves the writer only short moments.
	pollHold = 30 * time.Millisecond
	pollGap  = 1 * time.Millisecond
	// pollPause: "read" mode calls ReadStatus (default retries) on a
	// 64 KiB status this often: 500 times a second, where GUIs poll once.
	pollPause = 2 * time.Millisecond
	// fastPollPause: "readfast" mode calls ReadStatus this often, the
	// busiest poller anyone writes (and busier than any GUI needs).
	fastPollPause = 1 * time.Millisecond
)

func init() { roles[windowsPollerRole] = windowsPoller }

// windowsPoller polls until stdin closes, then prints
// "polls N failed M first ERROR". In "hold" mode a failed open is a moment
// when a replace was running (a sharing violation), not a failure.
func windowsPoller() int {
	dir := jobstore.JobDir(os.Getenv(pollerDirEnv))
	mode := os.Getenv(pollerModeEnv)
	var stop atomic.Bool
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		stop.Store(true)
	}()
	fmt.Println("ready")
	var polls, failed int
	first := "none"
	for !stop.Load() {
		polls++
		switch mode {
		case "hold":
			if f, err := os.Open(dir.StatusPath()); err == nil {
				time.Sleep(pollHold)
				_ = f.Close()
			}
			time.Sleep(pollGap)
		case "read":
			if _, err := jobstore.ReadStatus(dir); err != nil {
				if failed++; failed == 1 {
					first = strings.ReplaceAll(err.Error(), "\n", " ")
				}
			}
			time.Sleep(pollPause)
		case "readfast":
			if _, err := jobstore.ReadStatus(dir); err != nil {
				if failed++; failed == 1 {
					first = strings.ReplaceAll(err.Error(), "\n", " ")
				}
			}
			time.Sleep(fastPollPause)
		default:
			fmt.Fprintf(os.Stderr, "poller: unknown mode %q\n", mode)
			return 2
		}
	}
	fmt.Printf("polls %d failed %d first %s\n", polls, failed, first)
	return 0
}

// startPoller starts a poller on dir and waits until it polls. stop ends it
// and returns what it printed at the end.
func startPoller(t *testing.T, dir jobstore.JobDir, mode string) (stop func() string) {
	t.Helper()
	cmd := childCommand(t, windowsPollerRole, pollerDirEnv+"="+string(dir), pollerModeEnv+"="+mode)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	lines := bufio.NewScanner(stdout)
	require.True(t, lines.Scan(), "the poller did not start: %v", lines.Err())
	require.Equal(t, "ready", lines.Text())
	return func() string {
		require.NoError(t, stdin.Close())
		require.True(t, lines.Scan(), "the poller said nothing at the end: %v", lines.Err())
		last := lines.Text()
		require.NoError(t, cmd.Wait())
		return last
	}
}

// writeStatuses writes seq first..last, stopping at the first error.
func writeStatuses(dir jobstore.JobDir, first, last uint64, message string) error {
	for seq := first; seq <= last; seq++ {
		if err := jobstore.WriteStatus(dir, jobstore.JobStatus{State: jobstore.Running, Seq: seq, Message: message}); err != nil {
			return fmt.Errorf("write %d of %d: %w", seq, last, err)
		}
	}
	return nil
}

// TestWriteStatus_FindsTheGapsOfABusyPoller: a poller in another process
// keeps status.json open almost all the time, letting go for a moment
// between two polls. Every replace must find such a moment within its
// budget (a few tries spread over 2 s would not).
func TestWriteStatus_FindsTheGapsOfABusyPoller(t *testing.T) {
	const writes = 20
	dir := submitJob(t, "j1")
	stop := startPoller(t, dir, "hold")
	err := writeStatuses(dir, 2, writes, "")
	said := stop()
	t.Logf("%d writes against a poller holding the file %v with %v gaps: %s", writes, pollHold, pollGap, said)
	require.NoError(t, err, "the replace must find a gap between two polls within its budget")
	st, err := jobstore.ReadStatus(dir)
	require.NoError(t, err)
	assert.Equal(t, uint64(writes), st.Seq)
	requireNoTempFiles(t, dir)
}

// TestWriteStatus_FastPollerAndWriterBothGetThrough: a poller in another
// process calls ReadStatus (default retries) 500 times a second on a 64 KiB
// status.json while the writer rewrites it: every write and every read
// succeeds. The reader's retries absorb the sharing violations a replace
// causes; the writer's retries find the poller's pauses.
//
// Not promised: a reader that reads in a loop with no pause at all keeps
// the file open nearly all the time, and on a loaded machine (descheduled
// while holding it) for the whole replace budget; the write then fails. That
// is Windows' rule (a file open without FILE_SHARE_DELETE cannot be
// replaced), and the error says so.
func TestWriteStatus_FastPollerAndWriterBothGetThrough(t *testing.T) {
	const writes = 300
	dir := submitJob(t, "j1")
	message := strings.Repeat("x", 64<<10)
	require.NoError(t, writeStatuses(dir, 1, 1, message))
	stop := startPoller(t, dir, "read")
	err := writeStatuses(dir, 2, writes, message)
	said := stop()
	t.Logf("%d writes against a ReadStatus poller: %s", writes, said)
	require.NoError(t, err)
	assert.Contains(t, said, " failed 0 ", "every ReadStatus must get through its retries")
	st, err := jobstore.ReadStatus(dir)
	require.NoError(t, err)
	assert.Equal(t, uint64(writes), st.Seq)
	requireNoTempFiles(t, dir)
}

func TestWriteSpec_SecondWriteIsErrExists(t *testing.T) {
	dir := jobstore.JobDir(filepath.Join(tempDir(t), "j1"))
	require.NoError(t, jobstore.WriteSpec(dir, jobstore.JobSpec{ID: "j1", Kind: "first"}))
	before, err := os.ReadFile(dir.SpecPath())
	require.NoError(t, err)

	err = jobstore.WriteSpec(dir, jobstore.JobSpec{ID: "j1", Kind: "second"})
	require.Error(t, err)
	assert.ErrorIs(t, err, jobstore.ErrExists)
	assert.ErrorIs(t, err, fs.ErrExist)

	after, err := os.ReadFile(dir.SpecPath())
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after), "the first job.json must stay byte-identical")
	spec, err := jobstore.ReadSpec(dir)
	require.NoError(t, err)
	assert.Equal(t, "first", spec.Kind)
	requireNoTempFiles(t, dir)
}

func TestWriteSpec_RacingWritersExactlyOneWins(t *testing.T) {
	const (
		dirs    = 20
		writers = 8
	)
	root := tempDir(t)
	for d := range dirs {
		id := "race-" + string(rune('a'+d))
		dir := jobstore.JobDir(filepath.Join(root, id))
		errs := make([]error, writers)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				errs[w] = jobstore.WriteSpec(dir, jobstore.JobSpec{ID: id, Kind: "race", SubmittedBy: string(rune('A' + w))})
			}()
		}
		close(start)
		wg.Wait()

		winner := -1
		for w, err := range errs {
			if err == nil {
				require.Equal(t, -1, winner, "%s: writers %d and %d both won", id, winner, w)
				winner = w
				continue
			}
			require.ErrorIs(t, err, jobstore.ErrExists, "%s: writer %d", id, w)
			require.ErrorIs(t, err, fs.ErrExist, "%s: writer %d", id, w)
		}
		require.NotEqual(t, -1, winner, "%s: nobody won", id)
		spec, err := jobstore.ReadSpec(dir)
		require.NoError(t, err)
		assert.Equal(t, string(rune('A'+winner)), spec.SubmittedBy, "%s: job.json must hold the winner's record", id)
		requireNoTempFiles(t, dir)
	}
}

func TestReadStatus_RetriesSharingViolation(t *testing.T) {
	dir := submitJob(t, "j1")
	require.NoError(t, jobstore.WriteStatus(dir, jobstore.JobStatus{State: jobstore.Running, Seq: 7}))

	lock := func() windows.Handle {
		t.Helper()
		name, err := windows.UTF16PtrFromString(dir.StatusPath())
		require.NoError(t, err)
		h, err := windows.CreateFile(name, windows.GENERIC_READ, 0 /* share nothing */, nil,
			windows.OPEN_EXISTING, windows.FILE_ATTRIBUTE_NORMAL, 0)
		require.NoError(t, err)
		_, err = os.Open(dir.StatusPath())
		require.ErrorIs(t, err, windows.ERROR_SHARING_VIOLATION, "precondition: a share-mode-0 handle must block other opens")
		return h
	}

	t.Run("one attempt sees the violation", func(t *testing.T) {
		h := lock()
		defer windows.CloseHandle(h)
		_, err := jobstore.ReadStatus(dir, jobstore.WithRetries(1, 0))
		require.Error(t, err)
		t.Log(err)
		assert.ErrorIs(t, err, windows.ERROR_SHARING_VIOLATION)
	})

	t.Run("retries get through once the holder lets go", func(t *testing.T) {
		h := lock()
		var released atomic.Bool
		go func() {
			time.Sleep(lockHold)
			released.Store(true)
			_ = windows.CloseHandle(h)
		}()
		st, err := jobstore.ReadStatus(dir, jobstore.WithRetries(readRetryWindow, readRetryDelay))
		require.NoError(t, err)
		require.True(t, released.Load(), "the read got through while the file was locked")
		assert.Equal(t, uint64(7), st.Seq)
	})
}

func TestWindows_RoundTripLeavesNoTemps(t *testing.T) {
	dir := jobstore.JobDir(filepath.Join(tempDir(t), "j1"))
	sub := jobstore.JobSpec{ID: "j1", Kind: "render", Params: []byte(`{"frames":[1,2,3]}`), Labels: map[string]string{"a": "<&>"}}
	require.NoError(t, jobstore.WriteSpec(dir, sub))

	st, err := jobstore.ReadStatus(dir)
	require.NoError(t, err)
	assert.Nil(t, st, "no status.json yet reads as nil, nil")

	progress := 0.5
	for seq := uint64(1); seq <= 50; seq++ {
		want := jobstore.JobStatus{State: jobstore.Running, Seq: seq, Progress: &progress, Message: "step"}
		require.NoError(t, jobstore.WriteStatus(dir, want))
		got, err := jobstore.ReadStatus(dir)
		require.NoError(t, err)
		assert.Equal(t, seq, got.Seq)
		assert.Equal(t, "j1", got.JobID)
	}
	require.NoError(t, jobstore.WriteStatus(dir, jobstore.JobStatus{State: jobstore.Succeeded, Seq: 51}, jobstore.NoSync()))

	spec, err := jobstore.ReadSpec(dir)
	require.NoError(t, err)
	assert.Equal(t, sub.Kind, spec.Kind)
	assert.JSONEq(t, string(sub.Params), string(spec.Params))
	assert.Equal(t, sub.Labels, spec.Labels)

	fi, err := os.Stat(dir.SpecPath())
	require.NoError(t, err)
	assert.Zero(t, fi.Mode().Perm()&0o222, "job.json must be read-only, mode %v", fi.Mode())
	requireNoTempFiles(t, dir)
}

func TestWriteStatus_MissingDirIsErrNotJob(t *testing.T) {
	dir := jobstore.JobDir(filepath.Join(tempDir(t), "absent"))
	err := jobstore.WriteStatus(dir, jobstore.JobStatus{State: jobstore.Queued})
	assert.ErrorIs(t, err, jobstore.ErrNotJob)
	_, err = jobstore.ReadStatus(dir)
	assert.ErrorIs(t, err, jobstore.ErrNotJob)
}

func TestWriteStatus_WithReadOnlyPermCanBeWrittenAgain(t *testing.T) {
	dir := submitJob(t, "j1")
	for seq := uint64(2); seq <= 3; seq++ {
		require.NoError(t, jobstore.WriteStatus(dir, jobstore.JobStatus{State: jobstore.Running, Seq: seq}, jobstore.WithPerm(0o444)),
			"write %d: a rewritten record must stay replaceable", seq)
	}
	st, err := jobstore.ReadStatus(dir)
	require.NoError(t, err)
	assert.Equal(t, uint64(3), st.Seq)
	fi, err := os.Stat(dir.StatusPath())
	require.NoError(t, err)
	assert.NotZero(t, fi.Mode().Perm()&0o200, "status.json must not get FILE_ATTRIBUTE_READONLY: Windows would refuse the next replace")
	requireNoTempFiles(t, dir)
}

func TestWriteStatus_ReadOnlyTargetIsNamedAsSuch(t *testing.T) {
	if testdir.UnderWine() {
		t.Skip("Wine 8's MoveFileEx(REPLACE_EXISTING) replaces a target that has FILE_ATTRIBUTE_READONLY; " +
			"Windows refuses with ERROR_ACCESS_DENIED, which is what this test checks is reported")
	}
	dir := submitJob(t, "j1")
	require.NoError(t, os.Chmod(dir.StatusPath(), 0o444)) // FILE_ATTRIBUTE_READONLY, as attrib +r sets it
	before, err := os.ReadFile(dir.StatusPath())
	require.NoError(t, err)

	err = jobstore.WriteStatus(dir, jobstore.JobStatus{State: jobstore.Running, Seq: 2})
	require.Error(t, err)
	t.Log(err)
	assert.Contains(t, err.Error(), "read-only")
	assert.NotContains(t, err.Error(), "another process", "nobody holds the file open: do not blame a reader")
	assert.ErrorIs(t, err, fs.ErrPermission)

	after, err := os.ReadFile(dir.StatusPath())
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after))
	requireNoTempFiles(t, dir)
}

// TestWriteStatus_OurReadersNeverBlockAReplace: 8 pollers in other
// processes call ReadStatus every millisecond while the writer rewrites
// status.json 200 times. Our readers share delete, so where the POSIX
// rename works (NTFS) no write may fail and no read may fail. (Pollers that use os.Open, which does not share delete,
// are another matter: 8 of them at 1 ms make some writes fail after the
// replace timeout; see TestWriteStatus_FindsTheGapsOfABusyPoller for what
// one such poller leaves the writer.)
func TestWriteStatus_OurReadersNeverBlockAReplace(t *testing.T) {
	const (
		pollers = 8
		writes  = 200
	)
	dir := submitJob(t, "j1")
	supported, err := jobstore.POSIXRenameSupported(string(dir))
	require.NoError(t, err)
	if !supported {
		t.Skip("this system has no POSIX-semantics rename (Wine 8, FAT/exFAT, older Windows): a classic rename " +
			"cannot replace a file that any reader holds open, even one that shares delete, so readers can block a write " +
			"here as os.Open's do, until the replace timeout")
	}
	stops := make([]func() string, pollers)
	for i := range stops {
		stops[i] = startPoller(t, dir, "readfast")
	}
	var failed []error
	for seq := uint64(2); seq <= writes+1; seq++ {
		if err := jobstore.WriteStatus(dir, jobstore.JobStatus{State: jobstore.Running, Seq: seq}); err != nil {
			failed = append(failed, err)
		}
	}
	for i, stop := range stops {
		said := stop()
		t.Logf("poller %d: %s", i, said)
		assert.Contains(t, said, " failed 0 ", "poller %d: every ReadStatus must succeed", i)
		assert.NotContains(t, said, "polls 0 ", "poller %d never polled", i)
	}
	t.Logf("%d of %d writes failed against %d ReadStatus pollers at %v", len(failed), writes, pollers, fastPollPause)
	for _, err := range failed[:min(len(failed), 3)] {
		t.Log(err)
	}
	assert.Empty(t, failed, "a reader that shares delete must never make a write fail")
	st, err := jobstore.ReadStatus(dir)
	require.NoError(t, err)
	assert.Equal(t, uint64(writes+1), st.Seq)
	requireNoTempFiles(t, dir)
}

func TestWriteStatus_WithReplaceTimeout(t *testing.T) {
	t.Run("0 gives up at the first refusal", func(t *testing.T) {
		dir := submitJob(t, "j1")
		holdOpen(t, dir.StatusPath())
		err := jobstore.WriteStatus(dir, jobstore.JobStatus{State: jobstore.Running, Seq: 2}, jobstore.WithReplaceTimeout(0))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "another process kept it open")
		requireNoTempFiles(t, dir)
	})
	t.Run("a longer timeout is waited for", func(t *testing.T) {
		// Twice the default, so that a write that ignored the option and
		// gave up after the default would fail the lower bound.
		timeout := 2 * jobstore.DefaultReplaceTimeout
		dir := submitJob(t, "j1")
		holdOpen(t, dir.StatusPath())
		start := time.Now()
		err := jobstore.WriteStatus(dir, jobstore.JobStatus{State: jobstore.Running, Seq: 2}, jobstore.WithReplaceTimeout(timeout))
		waited := time.Since(start)
		require.Error(t, err, "the reader holds the file for the whole test")
		t.Logf("failed after %v: %v", waited.Round(time.Millisecond), err)
		assert.GreaterOrEqual(t, waited, timeout*3/4, "gave up before the timeout it was given")
		st, err := jobstore.ReadStatus(dir)
		require.NoError(t, err)
		assert.Equal(t, uint64(1), st.Seq, "the previous record is intact")
		requireNoTempFiles(t, dir)
	})
}
