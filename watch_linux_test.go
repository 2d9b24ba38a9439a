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

// inotifyInstances counts the process's inotify descriptors.
func inotifyInstances(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	n := 0
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil && target == "anon_inode:inotify" {
			n++
		}
	}
	return n
}

// 1,000 concurrent watchers cost one inotify instance (the per-user limit,
// fs.inotify.max_user_instances, is often 128), one descriptor, and a
// goroutine each. Job IDs that share prefixes (j1, j10, j100) check that
// ending one directory's watch leaves the others' alone.
func TestWatch_ThousandWatchersShareOneInotifyInstance(t *testing.T) {
	const watchers = 1000
	root := tempDir(t)
	dirs := make([]jobstore.JobDir, watchers+1)
	for i := 1; i <= watchers; i++ {
		dirs[i] = writeJob(t, root, specAt("j"+strconv.Itoa(i), i), statusIn(jobstore.Running, 1))
	}
	goroutines, fds, instances := runtime.NumGoroutine(), openFiles(t), inotifyInstances(t)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ctx1, cancel1 := context.WithCancel(ctx) // j1's watcher alone
	chans := make([]<-chan jobstore.Update, watchers+1)
	for i := 1; i <= watchers; i++ {
		c := ctx
		if i == 1 {
			c = ctx1
		}
		ch, err := jobstore.Watch(c, dirs[i], jobstore.WithPollInterval(slowPoll))
		require.NoError(t, err)
		chans[i] = ch
	}
	for _, ch := range chans[1:] {
		nextStatus(t, ch)
	}
	gotFDs, gotG := openFiles(t)-fds, runtime.NumGoroutine()-goroutines
	t.Logf("%d watchers: %d more descriptors, %d more inotify instances, %d more goroutines",
		watchers, gotFDs, inotifyInstances(t)-instances, gotG)
	assert.Equal(t, 1, inotifyInstances(t)-instances, "one shared instance")
	assert.LessOrEqual(t, gotFDs, 2, "the inotify descriptor (and at most the runtime's epoll)")
	assert.LessOrEqual(t, gotG, watchers+3, "a goroutine per watcher and one dispatcher (fsnotify's reader)")
	n, _ := jobstore.WatchedDirs()
	assert.Equal(t, watchers, n)

	cancel1()
	requireClosed(t, chans[1])
	for _, i := range []int{10, 100, 1000} {
		require.NoError(t, jobstore.WriteStatus(dirs[i], *statusIn(jobstore.Succeeded, 2), jobstore.NoSync()))
		assert.Equal(t, jobstore.Succeeded, nextStatus(t, chans[i]).State, "j%d still has its watch", i)
		requireClosed(t, chans[i])
	}

	cancel()
	for _, ch := range chans[2:] {
		for range ch {
		}
	}
	assert.LessOrEqual(t, goroutinesBackTo(t, goroutines), goroutines)
	assert.Equal(t, fds, openFiles(t))
	assert.Equal(t, instances, inotifyInstances(t))
}

// Runs waiting for cancel.json and Watches of status.json share the one
// inotify instance: a runner process with many jobs does not exhaust
// fs.inotify.max_user_instances, and both still hear their own file.
func TestRunContexts_ShareTheWatchersInotifyInstance(t *testing.T) {
	instances := inotifyInstances(t)
	const jobs = 20
	runs := make([]*jobstore.Run, jobs)
	for i := range runs {
		dir := newJob(t, fmt.Sprintf("ctx-%d", i))
		r, err := jobstore.Start(dir)
		require.NoError(t, err)
		t.Cleanup(func() { _ = r.Close() })
		_ = r.Context() // starts its wait for cancel.json
		runs[i] = r
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	updates, err := jobstore.Watch(ctx, runs[0].Dir())
	require.NoError(t, err)
	<-updates // the current status
	assert.Equal(t, 1, inotifyInstances(t)-instances, "one shared instance for %d contexts and a Watch", jobs)

	require.NoError(t, jobstore.RequestCancel(runs[7].Dir(), jobstore.CancelRequest{Reason: "shared"}))
	select {
	case <-runs[7].Context().Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the run's context was not cancelled")
	}
	assert.ErrorIs(t, context.Cause(runs[7].Context()), jobstore.ErrCancelRequested)
	assert.NoError(t, runs[6].Context().Err(), "another job's request is not this one's")
}

// A job directory removed and made again under the same ID, in a process
// that watched it before (the shared watcher kept a watch that died with
// the old directory): a Run of the new job still hears a cancel request by
// an event. Its context's poll is an hour, so only an event ends it within
// the guard. Five rounds, each on a directory watched and remade.
func TestRunContext_JobDirMadeAgainHearsCancelByEvent(t *testing.T) {
	root := tempDir(t)
	for round := range 5 {
		dir, err := jobstore.Submit(root, jobstore.JobSpec{ID: "again", Kind: "test"})
		require.NoError(t, err)
		// A watcher of the first directory that outlives it.
		updates, _ := startWatch(t, dir, jobstore.WithPollInterval(slowPoll))
		nextStatus(t, updates)
		require.NoError(t, os.RemoveAll(string(dir)))

		again, err := jobstore.Submit(root, jobstore.JobSpec{ID: "again", Kind: "test"})
		require.NoError(t, err)
		require.Equal(t, dir, again)
		r, err := jobstore.Start(dir)
		require.NoError(t, err)
		ctx := jobstore.ContextPolling(r, slowPoll)
		require.NoError(t, jobstore.RequestCancel(dir, jobstore.CancelRequest{Reason: "round " + strconv.Itoa(round)}))
		select {
		case <-ctx.Done():
		case <-time.After(deadline):
			t.Fatalf("round %d: the run's context heard no event of the cancel request within %v", round, deadline)
		}
		require.ErrorIs(t, context.Cause(ctx), jobstore.ErrCancelRequested)
		require.NoError(t, r.Close())
		require.NoError(t, os.RemoveAll(string(dir)))
	}
}

// A Watch whose job directory is removed and made again under it goes on
// hearing the new directory by events (its poll is an hour).
func TestWatch_JobDirMadeAgainUnderTheWatchIsHeardByEvents(t *testing.T) {
	root := tempDir(t)
	dir := writeJob(t, root, specAt("again", 1), statusIn(jobstore.Running, 1))
	updates, _ := startWatch(t, dir, jobstore.WithPollInterval(slowPoll))
	nextStatus(t, updates)
	require.NoError(t, os.RemoveAll(string(dir)))
	u, ok := next(t, updates)
	require.True(t, ok)
	require.Error(t, u.Err, "the removal is reported")

	writeJob(t, root, specAt("again", 1), statusIn(jobstore.Running, 2))
	for {
		u, ok := next(t, updates)
		require.True(t, ok)
		if u.Status != nil {
			assert.Equal(t, uint64(2), u.Status.Seq)
			break
		}
	}
	require.NoError(t, jobstore.WriteStatus(dir, *statusIn(jobstore.Succeeded, 3), jobstore.NoSync()))
	assert.Equal(t, jobstore.Succeeded, nextStatus(t, updates).State)
}
