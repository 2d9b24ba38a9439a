package jobstore_test

import (
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Intervals of the coalescing tests. neverDue keeps the timer from firing
// during a test, so that only the call under test can write; shortInterval
// lets the timer fire many times within deadline.
const (
	neverDue      = time.Hour
	shortInterval = 20 * time.Millisecond
	// deadline guards against a hang; it is not a speed limit.
	deadline = 20 * time.Second
)

// startCoalesced submits a job and starts it with the given progress interval.
func startCoalesced(t *testing.T, interval time.Duration) (jobstore.JobDir, *jobstore.Run) {
	t.Helper()
	dir, err := jobstore.Submit(filepath.Join(tempDir(t), "jobs"), jobstore.JobSpec{Kind: "test"})
	require.NoError(t, err)
	r, err := jobstore.Start(dir, jobstore.WithProgressInterval(interval))
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.Close() })
	return dir, r
}

// statusBytes is status.json as it is on disk. On Windows an open may fail
// with a sharing violation for a moment while the file is replaced (readers
// retry it, as ReadStatus does), so it is retried for up to a second.
func statusBytes(t *testing.T, dir jobstore.JobDir) string {
	t.Helper()
	b, err := os.ReadFile(dir.StatusPath())
	for end := time.Now().Add(time.Second); isSharingError(err) && time.Now().Before(end); {
		time.Sleep(10 * time.Millisecond)
		b, err = os.ReadFile(dir.StatusPath())
	}
	require.NoError(t, err)
	return string(b)
}

// waitSeq polls status.json until its seq is at least seq.
func waitSeq(t *testing.T, dir jobstore.JobDir, seq uint64) jobstore.JobStatus {
	t.Helper()
	end := time.Now().Add(deadline)
	for {
		st := readStatus(t, dir)
		if st.Seq >= seq {
			return st
		}
		if time.Now().After(end) {
			t.Fatalf("status.json still at seq %d after %v, want %d", st.Seq, deadline, seq)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestProgress_RecordsInMemoryAndFlushWritesTheLatestOnce(t *testing.T) {
	dir, r := startCoalesced(t, neverDue)
	before := statusBytes(t, dir)
	start := r.Status().Seq

	require.NoError(t, r.Progress(0.1, "first"))
	require.NoError(t, r.Progress(0.2, "second"))
	require.NoError(t, r.Progress(0.3, "")) // an empty message keeps "second"
	assert.Equal(t, before, statusBytes(t, dir), "Progress alone does not write within the interval")
	assert.Equal(t, start, r.Status().Seq, "Status is what was written")

	require.NoError(t, r.Flush())
	st := readStatus(t, dir)
	assert.Equal(t, start+1, st.Seq, "one write for three calls")
	require.NotNil(t, st.Progress)
	assert.Equal(t, 0.3, *st.Progress, "the latest fraction wins")
	assert.Equal(t, "second", st.Message, "the latest non-empty message wins")
	assert.Equal(t, st, r.Status())

	after := statusBytes(t, dir)
	require.NoError(t, r.Flush(), "nothing pending")
	assert.Equal(t, after, statusBytes(t, dir), "a Flush with nothing pending writes nothing")
}

func TestProgress_PendingIsWrittenWhenTheIntervalEnds(t *testing.T) {
	dir, r := startCoalesced(t, shortInterval)
	start := r.Status().Seq
	require.NoError(t, r.Progress(0.4, "then silence"))

	st := waitSeq(t, dir, start+1)
	assert.Equal(t, start+1, st.Seq)
	require.NotNil(t, st.Progress)
	assert.Equal(t, 0.4, *st.Progress)
	assert.Equal(t, "then silence", st.Message)

	written := statusBytes(t, dir)
	time.Sleep(5 * shortInterval)
	assert.Equal(t, written, statusBytes(t, dir), "nothing pending, nothing written")
}

// The rate limit counts from the start of the last write: however many
// calls, at most one write per interval (plus the first, which may be due at
// once). A slow machine makes fewer writes, never more.
func TestProgress_AtMostOneWritePerInterval(t *testing.T) {
	const goroutines = 4
	began := time.Now()
	dir, r := startCoalesced(t, shortInterval)
	start := r.Status().Seq
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for g := range goroutines {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				assert.NoError(t, r.Progress(float64(i%100)/100, "g"+strconv.Itoa(g)))
				time.Sleep(100 * time.Microsecond) // leave the CPU to the timer: the limit, not the scheduler, must bound the writes
			}
		})
	}
	time.Sleep(15 * shortInterval)
	close(stop)
	wg.Wait()
	// Read before the bound is computed, so that a write in between only
	// makes the bound looser.
	writes := readStatus(t, dir).Seq - start
	elapsed := time.Since(began)
	assert.LessOrEqual(t, writes, uint64(elapsed/shortInterval)+1, "in %v", elapsed)
	assert.GreaterOrEqual(t, writes, uint64(1), "the timer wrote while the calls went on")

	require.NoError(t, r.Progress(1, "last"))
	require.NoError(t, r.Flush())
	st := readStatus(t, dir)
	assert.Equal(t, 1.0, *st.Progress, "the last call wins")
	assert.Equal(t, "last", st.Message)
	assert.Equal(t, st, r.Status())
}

func TestProgress_PendingIsCarriedByTheNextWrite(t *testing.T) {
	tests := []struct {
		name    string
		write   func(r *jobstore.Run) error
		state   jobstore.State
		message string
	}{
		{"flush", (*jobstore.Run).Flush, jobstore.Running, "pending"},
		{"set message", func(r *jobstore.Run) error { return r.SetMessage("said") }, jobstore.Running, "said"},
		{"finish", func(r *jobstore.Run) error {
			return r.Finish(jobstore.Outcome{State: jobstore.Succeeded, Message: "done"})
		}, jobstore.Succeeded, "done"},
		{"close", (*jobstore.Run).Close, jobstore.Running, "pending"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir, r := startCoalesced(t, neverDue)
			start := r.Status().Seq
			require.NoError(t, r.Progress(0.7, "pending"))
			require.NoError(t, tc.write(r))
			st := readStatus(t, dir)
			assert.Equal(t, start+1, st.Seq, "one write carries both")
			require.NotNil(t, st.Progress, "the pending progress is in the record")
			assert.Equal(t, 0.7, *st.Progress)
			assert.Equal(t, tc.state, st.State)
			assert.Equal(t, tc.message, st.Message)
		})
	}
}

func TestProgress_NothingIsWrittenAfterClose(t *testing.T) {
	dir, r := startCoalesced(t, shortInterval)
	require.NoError(t, r.Progress(0.2, "a"))
	require.NoError(t, r.Close())
	closed := statusBytes(t, dir)
	require.ErrorIs(t, r.Progress(0.3, "b"), jobstore.ErrInvalid)
	time.Sleep(5 * shortInterval)
	assert.Equal(t, closed, statusBytes(t, dir), "the timer is stopped")
	assert.Contains(t, closed, `"progress": 0.2`)
}

// breakStatus puts a non-empty directory where status.json is, so that
// every replace fails (rename(2) over a directory: EISDIR; MoveFileEx:
// access denied), as root and under Wine too. The returned func repairs it.
func breakStatus(t *testing.T, dir jobstore.JobDir) (repair func()) {
	t.Helper()
	require.NoError(t, os.Remove(dir.StatusPath()))
	require.NoError(t, os.MkdirAll(filepath.Join(dir.StatusPath(), "x"), 0o755))
	return func() {
		require.NoError(t, os.Remove(filepath.Join(dir.StatusPath(), "x"))) // not RemoveAll: it fails under Wine
		require.NoError(t, os.Remove(dir.StatusPath()))
	}
}

func TestProgress_BackgroundWriteErrorIsReturnedByTheNextCall(t *testing.T) {
	dir, r := startCoalesced(t, shortInterval)
	start := r.Status().Seq
	repair := breakStatus(t, dir)

	// The first call arms the timer; its write fails in the background,
	// and a later call says so.
	var err error
	end := time.Now().Add(deadline)
	for i := 0; err == nil; i++ {
		require.False(t, time.Now().After(end), "no background error within %v", deadline)
		err = r.Progress(0.5, "kept "+strconv.Itoa(i))
		time.Sleep(time.Millisecond)
	}
	var je *jobstore.Error
	require.ErrorAs(t, err, &je)
	assert.Equal(t, "progress", je.Op)
	assert.Contains(t, err.Error(), "background progress write failed")
	var cause *jobstore.Error
	require.ErrorAs(t, je.Unwrap(), &cause, "it wraps the write's own error")
	assert.Equal(t, dir.StatusPath(), cause.Path)
	last := "kept after the error"
	require.NoError(t, r.Progress(0.6, last), "the error is returned once")

	require.Error(t, r.Flush(), "still broken: Flush fails")
	require.Error(t, r.Finish(jobstore.Outcome{State: jobstore.Succeeded}), "still broken: Finish fails")
	assert.Equal(t, start, r.Status().Seq)

	repair()
	require.NoError(t, r.Flush())
	st := readStatus(t, dir)
	assert.Equal(t, start+1, st.Seq, "the failed writes' numbers are reused")
	assert.Equal(t, 0.6, *st.Progress, "nothing reported was lost")
	assert.Equal(t, last, st.Message)
	require.NoError(t, r.Finish(jobstore.Outcome{State: jobstore.Succeeded, Message: "done"}))
}

func TestProgress_FinishCarriesWhatABackgroundWriteFailedToWrite(t *testing.T) {
	dir, r := startCoalesced(t, shortInterval)
	start := r.Status().Seq
	repair := breakStatus(t, dir)
	require.NoError(t, r.Progress(0.9, "almost"))
	time.Sleep(5 * shortInterval) // the background write fails meanwhile (or has not run: either way)
	repair()
	require.NoError(t, r.Finish(jobstore.Outcome{State: jobstore.Succeeded, Message: "done"}))
	st := readStatus(t, dir)
	assert.Equal(t, jobstore.Succeeded, st.State)
	assert.Equal(t, 0.9, *st.Progress, "the terminal record carries the last progress")
	assert.LessOrEqual(t, st.Seq, start+2)
}

func TestStart_NegativeProgressIntervalIsErrInvalid(t *testing.T) {
	dir, err := jobstore.Submit(tempDir(t), jobstore.JobSpec{Kind: "test"})
	require.NoError(t, err)
	_, err = jobstore.Start(dir, jobstore.WithProgressInterval(-time.Second))
	require.ErrorIs(t, err, jobstore.ErrInvalid)
	var je *jobstore.Error
	require.ErrorAs(t, err, &je)
	assert.Equal(t, "progress interval", je.Subject)
	assert.Equal(t, jobstore.Queued, readStatus(t, dir).State, "nothing written")
	r, err := jobstore.Start(dir)
	require.NoError(t, err, "the lock was not taken")
	require.NoError(t, r.Close())
}

// Progress, Flush, SetMessage and Status from many goroutines while the
// timer writes: under -race this is the proof that the state is guarded;
// seq on disk and in the handle agree at the end.
func TestProgress_ManyGoroutinesWithTheTimer(t *testing.T) {
	dir, r := startCoalesced(t, time.Millisecond)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 300 {
				assert.NoError(t, r.Progress(float64(i)/300, "g"+strconv.Itoa(g)))
				switch i % 100 {
				case 50:
					assert.NoError(t, r.Flush())
				case 99:
					assert.NoError(t, r.SetMessage("m"+strconv.Itoa(g)))
				}
				_ = r.Status()
			}
		})
	}
	wg.Wait()
	require.NoError(t, r.Flush())
	assert.Equal(t, r.Status(), readStatus(t, dir))
	require.NoError(t, r.Finish(jobstore.Outcome{State: jobstore.Succeeded}))
}
