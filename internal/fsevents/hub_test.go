package fsevents

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/axqua/jobstore/internal/testdir"
)

// Timing of the tests: guard is a deadlock guard, never a speed limit;
// quiet is how long a sink that must stay empty is given to misbehave.
const (
	guard = 20 * time.Second
	quiet = 100 * time.Millisecond
)

// newDir makes a fresh directory and returns its absolute path.
func newDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(testdir.New(t))
	require.NoError(t, err)
	return dir
}

// mustSubscribe subscribes dir to sink, skips where the OS gives no
// events, and cancels the subscription at cleanup.
func mustSubscribe(t *testing.T, dir string, names []string, sink *Sink) *Subscription {
	t.Helper()
	s := Subscribe(dir, names, sink)
	if s == nil {
		if runtime.GOOS == "linux" {
			t.Fatalf("no events for %s on Linux", dir)
		}
		t.Skipf("no file system events on %s", runtime.GOOS)
	}
	t.Cleanup(s.Cancel)
	return s
}

// waitFor takes changes from sink until each of want has arrived (or
// events were lost, which tells a subscriber to look at everything).
func waitFor(t *testing.T, sink *Sink, want ...Change) {
	t.Helper()
	timeout := time.After(guard)
	var seen []Change
	for {
		select {
		case <-sink.Ready():
			var lost bool
			seen, lost = sink.Take(seen)
			if lost || !slices.ContainsFunc(want, func(c Change) bool { return !slices.Contains(seen, c) }) {
				return
			}
		case <-timeout:
			t.Fatalf("not all of %+v within %v; saw %+v", want, guard, seen)
		}
	}
}

// mustNotSee fails if sink reports c within quiet.
func mustNotSee(t *testing.T, sink *Sink, c Change) {
	t.Helper()
	timeout := time.After(quiet)
	for {
		select {
		case <-sink.Ready():
			if got, _ := sink.Take(nil); slices.Contains(got, c) {
				t.Fatalf("unexpected change %+v", c)
			}
		case <-timeout:
			return
		}
	}
}

// mustStayQuiet fails if sink reports any change within quiet.
func mustStayQuiet(t *testing.T, sink *Sink) {
	t.Helper()
	select {
	case <-sink.Ready():
		if got, lost := sink.Take(nil); len(got) > 0 || lost {
			t.Fatalf("unexpected changes %+v (lost %v)", got, lost)
		}
	case <-time.After(quiet):
	}
}

// publish puts data under name in dir the way the records are published:
// written under a temp name, then renamed.
func publish(t *testing.T, dir, name string, data string) {
	t.Helper()
	tmp := filepath.Join(dir, "."+name+"123")
	require.NoError(t, os.WriteFile(tmp, []byte(data), 0o644))
	require.NoError(t, os.Rename(tmp, filepath.Join(dir, name)))
}

// TestSubscribe_NamesSelectWhatIsReported: a subscription to one name
// hears that name and not its temp file or a sibling; one to every entry
// hears all of them.
func TestSubscribe_NamesSelectWhatIsReported(t *testing.T) {
	dir := newDir(t)
	one, all := NewSink(), NewSink()
	mustSubscribe(t, dir, []string{"status.json"}, one)
	mustSubscribe(t, dir, nil, all)

	publish(t, dir, "other.json", "{}")
	waitFor(t, all, Change{dir, "other.json"}, Change{dir, ".other.json123"})
	mustStayQuiet(t, one)

	publish(t, dir, "status.json", "{}")
	waitFor(t, one, Change{dir, "status.json"})
	waitFor(t, all, Change{dir, "status.json"})
}

// TestSubscribe_CancelledSubscriptionHearsNothing: after Cancel, no change
// reaches the sink, while another subscriber of the directory still hears.
func TestSubscribe_CancelledSubscriptionHearsNothing(t *testing.T) {
	dir := newDir(t)
	gone, kept := NewSink(), NewSink()
	s := mustSubscribe(t, dir, nil, gone)
	mustSubscribe(t, dir, nil, kept)
	s.Cancel()
	s.Cancel() // twice is fine
	publish(t, dir, "status.json", "{}")
	waitFor(t, kept, Change{dir, "status.json"})
	mustStayQuiet(t, gone)
}

// requireRepairs skips a test of watches set up again under Wine, which
// keeps a watched directory that is deleted (delete pending) and reports
// nothing of it, so that there is nothing to set up again.
func requireRepairs(t *testing.T) {
	t.Helper()
	if testdir.UnderWine() {
		t.Skip("Wine reports nothing of a watched directory deleted, and keeps it until the watch ends")
	}
}

// holdOf is how many missing subdirectories dir's watch waits for.
func holdOf(dir string) int {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.hub == nil {
		return 0
	}
	shared.hub.mu.Lock()
	defer shared.hub.mu.Unlock()
	if dw := shared.hub.dirs[dir]; dw != nil {
		return dw.holds
	}
	return 0
}

// waitHeld waits until the hub watches parent for a missing subdirectory:
// the hub has seen the subdirectory go and found it missing.
func waitHeld(t *testing.T, parent string) {
	t.Helper()
	end := time.Now().Add(guard)
	for holdOf(parent) == 0 {
		if time.Now().After(end) {
			t.Fatalf("the hub did not start watching %s for its missing subdirectory", parent)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestSubscribe_NewSubscriberOfADirectoryMadeAgainGetsEvents: while an
// old subscription outlives its directory, a new subscription to the new
// directory under that path gets its events (the hub does not take the
// old, dead watch for the new directory's).
func TestSubscribe_NewSubscriberOfADirectoryMadeAgainGetsEvents(t *testing.T) {
	requireRepairs(t)
	root := newDir(t)
	dir := filepath.Join(root, "j1")
	require.NoError(t, os.Mkdir(dir, 0o755))
	old := NewSink()
	mustSubscribe(t, dir, nil, old)
	require.NoError(t, os.RemoveAll(dir))
	waitFor(t, old, Change{dir, ""})
	waitHeld(t, root)
	waitRepaired(t)
	old.Take(nil)
	require.NoError(t, os.Mkdir(dir, 0o755))
	waitFor(t, old, Change{dir, ""}) // the new directory, seen
	waitRepaired(t)                  // and watched

	sink := NewSink()
	mustSubscribe(t, dir, []string{"cancel.json"}, sink)
	publish(t, dir, "cancel.json", "{}")
	waitFor(t, sink, Change{dir, "cancel.json"})
}

// requireNothingWatched checks that the hub is gone.
func requireNothingWatched(t *testing.T, msg string) {
	t.Helper()
	n, exists := Watched()
	assert.False(t, exists, "%s (%d watches left)", msg, n)
}

// baselineGoroutines is the count of goroutines a test of what the hub
// leaves compares with.
func baselineGoroutines(t *testing.T) int {
	t.Helper()
	return runtime.NumGoroutine()
}

// TestSubscribe_MissingDirectoryIsNil: no watch for a directory that is
// not there (or is not a directory): nil, and no hub left behind.
func TestSubscribe_MissingDirectoryIsNil(t *testing.T) {
	root := newDir(t)
	require.NoError(t, os.WriteFile(filepath.Join(root, "file"), nil, 0o644))
	for _, p := range []string{filepath.Join(root, "missing"), filepath.Join(root, "file", "x")} {
		assert.Nil(t, Subscribe(p, nil, NewSink()), p)
	}
	requireNothingWatched(t, "no hub left behind")
}

// TestCancel_LastSubscriptionReleasesEverything: watches, the parent watch
// kept for a missing directory, the OS watcher and the hub's goroutines
// all go with the last subscription, even when subscribers come and go
// from many goroutines while directories are removed and made again.
func TestCancel_LastSubscriptionReleasesEverything(t *testing.T) {
	goroutines := baselineGoroutines(t)
	root := newDir(t)
	const dirs = 8
	var wg sync.WaitGroup
	for i := range dirs {
		dir := filepath.Join(root, string(rune('a'+i)))
		require.NoError(t, os.Mkdir(dir, 0o755))
		wg.Go(func() {
			for range 50 {
				sink := NewSink()
				s := Subscribe(dir, nil, sink)
				_ = os.RemoveAll(dir)
				_ = os.Mkdir(dir, 0o755)
				if s != nil {
					s.Cancel()
				}
			}
		})
	}
	wg.Wait()
	requireNothingWatched(t, "the hub is closed with its last subscription")
	end := time.Now().Add(guard)
	for runtime.NumGoroutine() > goroutines && time.Now().Before(end) {
		time.Sleep(time.Millisecond)
	}
	assert.LessOrEqual(t, runtime.NumGoroutine(), goroutines, "goroutines back to the baseline")
}

// TestWatched_CountsLiveWatches: one watch per directory however many
// subscribe to it, and none once they are gone.
func TestWatched_CountsLiveWatches(t *testing.T) {
	a, b := newDir(t), newDir(t)
	s1 := mustSubscribe(t, a, nil, NewSink())
	s2 := mustSubscribe(t, a, []string{"x"}, NewSink())
	s3 := mustSubscribe(t, b, nil, NewSink())
	n, exists := Watched()
	assert.True(t, exists)
	assert.Equal(t, 2, n)
	s1.Cancel()
	n, _ = Watched()
	assert.Equal(t, 2, n, "a still has a subscriber")
	s2.Cancel()
	n, _ = Watched()
	assert.Equal(t, 1, n)
	s3.Cancel()
	requireNothingWatched(t, "none once they are gone")
}

// overflowGuard only guards against a hang: on a loaded machine making and
// delivering tens of thousands of events takes long.
const overflowGuard = 2 * time.Minute

// TestDispatch_OverflowTellsEverySinkAndWatchingGoesOn: while dispatch is
// held up, more events than the OS queues (fs.inotify.max_queued_events,
// 16,384 by default) are made; every sink is then told that events were
// lost, and events are delivered again afterwards.
func TestDispatch_OverflowTellsEverySinkAndWatchingGoesOn(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the queue limit is inotify's")
	}
	dir, other := newDir(t), newDir(t)
	sink, quiet := NewSink(), NewSink()
	mustSubscribe(t, dir, nil, sink)
	mustSubscribe(t, other, nil, quiet)
	limit := 16384
	if b, err := os.ReadFile("/proc/sys/fs/inotify/max_queued_events"); err == nil {
		_, _ = fmt.Sscan(string(b), &limit)
	}
	// fsnotify's reader may have taken up to 4,096 events (its buffer:
	// 64 KiB of events of 16 bytes and more) off the kernel's queue before
	// it blocks on dispatch: the burst must overflow the queue after them.
	const readerBuffer = 4096
	h := shared.hub
	h.mu.Lock() // dispatch waits here with the first event; the kernel queue fills
	for i := range limit + readerBuffer + 100 {
		require.NoError(t, os.WriteFile(filepath.Join(dir, strconv.Itoa(i)), nil, 0o644))
	}
	h.mu.Unlock()
	for _, k := range []*Sink{sink, quiet} {
		select {
		case <-k.Ready():
		case <-time.After(overflowGuard):
			t.Fatal("no wake after the overflow")
		}
		for {
			_, lost := k.Take(nil)
			if lost {
				break
			}
			select {
			case <-k.Ready():
			case <-time.After(overflowGuard):
				t.Fatal("the overflow was not reported")
			}
		}
	}
	publish(t, other, "after", "{}")
	waitFor(t, quiet, Change{other, "after"})
}

// waitRepaired waits until the hub has no repair or check pending, nor
// running (the repairer holds shared.mu while it works).
func waitRepaired(t *testing.T) {
	t.Helper()
	end := time.Now().Add(guard)
	for {
		shared.mu.Lock()
		n := 0
		if h := shared.hub; h != nil {
			h.mu.Lock()
			n = len(h.pending) + len(h.checks)
			h.mu.Unlock()
		}
		shared.mu.Unlock()
		if n == 0 {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("the hub's repairs did not end within %v", guard)
		}
		time.Sleep(time.Millisecond)
	}
}
