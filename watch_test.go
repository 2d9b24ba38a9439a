package jobstore_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// statusWriter runs the job in JOBSTORE_TEST_DIR with Run, writing
// JOBSTORE_TEST_COUNT progress updates (each its own write), then succeeds.
func statusWriter() int {
	n, _ := strconv.Atoi(os.Getenv(countEnv))
	r, err := jobstore.Start(jobstore.JobDir(os.Getenv(dirEnv)), jobstore.WithProgressInterval(0))
	if err != nil {
		return exitCode(err)
	}
	for i := 1; i <= n; i++ {
		if err := r.Progress(float64(i)/float64(n), "step "+strconv.Itoa(i)); err != nil {
			return exitCode(err)
		}
	}
	if err := r.Finish(jobstore.Outcome{State: jobstore.Succeeded, Message: "all done"}); err != nil {
		return exitCode(err)
	}
	return exitCode(r.Close())
}

// fastPoll keeps the poll-only tests quick; the event tests keep the poll
// slow (slowPoll), so that what arrives within it came by an event.
const (
	fastPoll = 5 * time.Millisecond
	slowPoll = time.Hour
)

// watchModes are the two ways a watcher learns of a change.
var watchModes = []struct {
	name string
	opts []jobstore.WatchOption
}{
	{"events", nil},
	{"poll only", []jobstore.WatchOption{jobstore.WithoutEvents(), jobstore.WithPollInterval(fastPoll)}},
}

// startWatch starts a Watch cancelled at cleanup.
func startWatch(t *testing.T, dir jobstore.JobDir, opts ...jobstore.WatchOption) (<-chan jobstore.Update, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ch, err := jobstore.Watch(ctx, dir, opts...)
	require.NoError(t, err)
	return ch, cancel
}

// next receives an update, failing after deadline (a hang guard).
func next(t *testing.T, ch <-chan jobstore.Update) (jobstore.Update, bool) {
	t.Helper()
	select {
	case u, ok := <-ch:
		return u, ok
	case <-time.After(deadline):
		t.Fatalf("no update within %v", deadline)
		return jobstore.Update{}, false
	}
}

// nextStatus receives an update that must be a status.
func nextStatus(t *testing.T, ch <-chan jobstore.Update) *jobstore.JobStatus {
	t.Helper()
	u, ok := next(t, ch)
	require.True(t, ok, "channel closed")
	require.NoError(t, u.Err)
	require.NotNil(t, u.Status)
	return u.Status
}

// requireClosed waits for the channel to close, with nothing more on it.
func requireClosed(t *testing.T, ch <-chan jobstore.Update) {
	t.Helper()
	u, ok := next(t, ch)
	require.False(t, ok, "got %+v after the end", u)
}

// collect receives until the channel closes, checking the seq order.
func collect(t *testing.T, ch <-chan jobstore.Update, pause time.Duration) []*jobstore.JobStatus {
	t.Helper()
	var got []*jobstore.JobStatus
	for {
		u, ok := next(t, ch)
		if !ok {
			return got
		}
		require.NoError(t, u.Err)
		require.NotNil(t, u.Status)
		if n := len(got); n > 0 {
			require.Greater(t, u.Status.Seq, got[n-1].Seq, "never out of order, never twice")
		}
		got = append(got, u.Status)
		time.Sleep(pause)
	}
}

func TestWatch_NotAJobFailsAtOnce(t *testing.T) {
	root := tempDir(t)
	for name, dir := range map[string]jobstore.JobDir{
		"missing":     jobstore.JobDir(filepath.Join(root, "nope")),
		"no job.json": jobstore.JobDir(root),
		"status alone": func() jobstore.JobDir {
			d := writeJob(t, root, specAt("j", 0), statusIn(jobstore.Running, 1))
			require.NoError(t, os.Remove(d.SpecPath()))
			return d
		}(),
	} {
		t.Run(name, func(t *testing.T) {
			ch, err := jobstore.Watch(context.Background(), dir)
			require.ErrorIs(t, err, jobstore.ErrNotJob)
			assert.Nil(t, ch)
		})
	}
}

func TestWatch_CurrentStatusFirstThenEachNewerInOrderClosedAfterTerminal(t *testing.T) {
	for _, mode := range watchModes {
		for _, receiver := range []struct {
			name  string
			pause time.Duration
		}{{"prompt receiver", 0}, {"slow receiver", 3 * time.Millisecond}} {
			t.Run(mode.name+"/"+receiver.name, func(t *testing.T) {
				dir, err := jobstore.Submit(tempDir(t), jobstore.JobSpec{Kind: "test"})
				require.NoError(t, err)
				ch, _ := startWatch(t, dir, mode.opts...)
				first := nextStatus(t, ch)
				assert.Equal(t, jobstore.Queued, first.State)
				assert.Equal(t, uint64(1), first.Seq)

				const updates = 50
				go func() {
					r, err := jobstore.Start(dir, jobstore.WithProgressInterval(0))
					if !assert.NoError(t, err) {
						return
					}
					defer r.Close()
					for i := 1; i <= updates; i++ {
						assert.NoError(t, r.Progress(float64(i)/updates, ""))
						time.Sleep(time.Millisecond)
					}
					assert.NoError(t, r.Finish(jobstore.Outcome{State: jobstore.Succeeded}))
				}()
				got := collect(t, ch, receiver.pause)
				require.NotEmpty(t, got)
				last := got[len(got)-1]
				assert.Equal(t, jobstore.Succeeded, last.State, "the terminal status is delivered, then the channel closes")
				assert.Equal(t, uint64(1+1+updates+1), last.Seq)
				t.Logf("%d of %d statuses delivered", len(got), updates+2)
			})
		}
	}
}

func TestWatch_NoStatusYetIsANilStatusFirst(t *testing.T) {
	for _, mode := range watchModes {
		t.Run(mode.name, func(t *testing.T) {
			dir := writeJob(t, tempDir(t), specAt("j", 0), nil)
			ch, _ := startWatch(t, dir, mode.opts...)
			u, ok := next(t, ch)
			require.True(t, ok)
			assert.Equal(t, jobstore.Update{}, u, "nothing has run yet")

			require.NoError(t, jobstore.WriteStatus(dir, *statusIn(jobstore.Running, 5)))
			assert.Equal(t, uint64(5), nextStatus(t, ch).Seq)
			require.NoError(t, jobstore.WriteStatus(dir, *statusIn(jobstore.Cancelled, 6)))
			assert.Equal(t, jobstore.Cancelled, nextStatus(t, ch).State)
			requireClosed(t, ch)
		})
	}
}

// An older or equal seq is never delivered; a read error is delivered once
// and watching goes on; a newer schema ends the watch.
func TestWatch_ErrorsAreDeliveredAndWatchingGoesOnUntilANewerSchema(t *testing.T) {
	for _, mode := range watchModes {
		t.Run(mode.name, func(t *testing.T) {
			dir := writeJob(t, tempDir(t), specAt("j", 0), statusIn(jobstore.Running, 7))
			ch, _ := startWatch(t, dir, mode.opts...)
			assert.Equal(t, uint64(7), nextStatus(t, ch).Seq)

			// Another writer (a script, not jobstore, which refuses to go back)
			// writes an older seq and the same seq again.
			require.NoError(t, jobstore.WriteJSONAtomic(dir.StatusPath(), statusIn(jobstore.Running, 6)))
			require.NoError(t, jobstore.WriteJSONAtomic(dir.StatusPath(), statusIn(jobstore.Running, 7)))
			require.NoError(t, jobstore.WriteJSONAtomic(dir.StatusPath(), map[string]any{"schema_version": 1, "state": 42}))
			u, ok := next(t, ch)
			require.True(t, ok)
			require.ErrorIs(t, u.Err, jobstore.ErrInvalid, "no seq 6 or 7 again, but the bad record")
			assert.Nil(t, u.Status)

			require.NoError(t, jobstore.WriteStatus(dir, *statusIn(jobstore.Running, 8)))
			assert.Equal(t, uint64(8), nextStatus(t, ch).Seq, "watching went on")

			require.NoError(t, jobstore.WriteJSONAtomic(dir.StatusPath(), map[string]any{"schema_version": jobstore.StatusSchemaVersion + 1, "seq": 9}))
			u, ok = next(t, ch)
			require.True(t, ok)
			require.ErrorIs(t, u.Err, jobstore.ErrNewerSchema)
			requireClosed(t, ch)
		})
	}
}

func TestWatch_ClosedWhenCtxIsDone(t *testing.T) {
	for _, mode := range watchModes {
		t.Run(mode.name, func(t *testing.T) {
			dir := writeJob(t, tempDir(t), specAt("j", 0), statusIn(jobstore.Running, 3))
			ch, cancel := startWatch(t, dir, mode.opts...)
			assert.Equal(t, uint64(3), nextStatus(t, ch).Seq)
			cancel()
			requireClosed(t, ch)
		})
	}
	t.Run("with an update waiting", func(t *testing.T) {
		dir := writeJob(t, tempDir(t), specAt("j", 0), statusIn(jobstore.Running, 3))
		ch, cancel := startWatch(t, dir)
		time.Sleep(10 * time.Millisecond) // the first update waits, not received
		cancel()
		for range ch { // it may still be delivered; then the channel closes
		}
	})
}

// A status written by another process is delivered; the poll alone
// suffices where no event comes.
func TestWatch_StatusWrittenByAChildProcessIsDelivered(t *testing.T) {
	for _, mode := range watchModes {
		t.Run(mode.name, func(t *testing.T) {
			dir, err := jobstore.Submit(tempDir(t), jobstore.JobSpec{Kind: "test"})
			require.NoError(t, err)
			ch, _ := startWatch(t, dir, mode.opts...)
			assert.Equal(t, jobstore.Queued, nextStatus(t, ch).State)

			const updates = 20
			c := childCommand(t, "statuswriter", dirEnv+"="+string(dir), countEnv+"="+strconv.Itoa(updates))
			startChild(t, c)
			got := collect(t, ch, 0)
			require.NoError(t, c.Wait())
			last := got[len(got)-1]
			assert.Equal(t, jobstore.Succeeded, last.State)
			assert.Equal(t, "all done", last.Message)
			assert.NotEqual(t, os.Getpid(), last.PID, "written by the child")
		})
	}
}

// With the poll an hour away, what arrives came by a file system event.
func TestWatch_EventsDeliverWithoutThePoll(t *testing.T) {
	skipWithoutEvents(t)
	dir := writeJob(t, tempDir(t), specAt("j", 0), statusIn(jobstore.Running, 1))
	ch, _ := startWatch(t, dir, jobstore.WithPollInterval(slowPoll))
	assert.Equal(t, uint64(1), nextStatus(t, ch).Seq)
	for seq := uint64(2); seq <= 5; seq++ {
		require.NoError(t, jobstore.WriteStatus(dir, *statusIn(jobstore.Running, seq), jobstore.NoSync()))
		assert.Equal(t, seq, nextStatus(t, ch).Seq)
	}
}

// skipWithoutEvents skips where the test binary may get no file system
// events: Wine's ReadDirectoryChangesW is not Windows'.
func skipWithoutEvents(t *testing.T) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("events under Wine are not proof of Windows' behaviour; the poll tests cover Windows")
	}
}

// goroutinesBackTo waits until the number of goroutines is at most want, and
// returns it.
//
// A goroutine an earlier test left ending may end meanwhile, so callers
// check that the count is at most want, not equal to it.
func goroutinesBackTo(t *testing.T, want int) int {
	t.Helper()
	end := time.Now().Add(deadline)
	for {
		n := runtime.NumGoroutine()
		if n <= want || time.Now().After(end) {
			return n
		}
		time.Sleep(time.Millisecond)
	}
}

// requireNothingWatched checks that the shared watcher is closed.
func requireNothingWatched(t *testing.T, msg string) {
	t.Helper()
	n, hub := jobstore.WatchedDirs()
	assert.False(t, hub, "%s (%d watches left)", msg, n)
}

func TestWatch_ReleasesGoroutinesAndDescriptorsWhenCtxIsDone(t *testing.T) {
	const watchers = 20
	root := tempDir(t)
	dirs := make([]jobstore.JobDir, watchers)
	for i := range dirs {
		dirs[i] = writeJob(t, root, specAt(fmt.Sprintf("j%d", i), i), statusIn(jobstore.Running, 1))
	}
	requireNothingWatched(t, "no other test's watcher is left")
	goroutines, fds := runtime.NumGoroutine(), settledOpenFiles(t)

	ctx, cancel := context.WithCancel(context.Background())
	chans := make([]<-chan jobstore.Update, 0, 2*watchers)
	for i, dir := range dirs {
		opts := []jobstore.WatchOption{}
		if i%2 == 1 {
			opts = append(opts, jobstore.WithoutEvents())
		}
		for range 2 { // two watchers of one directory share its watch
			ch, err := jobstore.Watch(ctx, dir, opts...)
			require.NoError(t, err)
			chans = append(chans, ch)
		}
	}
	for _, ch := range chans {
		nextStatus(t, ch)
	}
	n, hub := jobstore.WatchedDirs()
	if hub { // events are available here
		assert.Equal(t, watchers/2, n, "one watch per directory, none for the poll-only watchers")
	}
	assert.GreaterOrEqual(t, runtime.NumGoroutine(), goroutines+len(chans), "one goroutine per watcher")

	cancel()
	for _, ch := range chans {
		requireClosed(t, ch)
	}
	requireNothingWatched(t, "the shared watcher is closed with its last subscriber")
	assert.LessOrEqual(t, goroutinesBackTo(t, goroutines), goroutines, "goroutines back to the baseline")
	if fds >= 0 {
		assert.Equal(t, fds, openFiles(t), "descriptors back to the baseline")
	}
}
