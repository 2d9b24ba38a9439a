package fsevents

import (
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/windows"
)

// countingWatcher is an osWatcher whose handle closes are counted; its
// events are read (and kept) until Close.
func countingWatcher(t *testing.T) (w *osWatcher, closes *atomic.Int64, events func() []fsnotify.Event) {
	t.Helper()
	closes = new(atomic.Int64)
	w, err := newOSWatcherClosing(func(h windows.Handle) error {
		closes.Add(1)
		return windows.CloseHandle(h)
	})
	require.NoError(t, err)
	var mu sync.Mutex
	var seen []fsnotify.Event
	var wg sync.WaitGroup
	wg.Go(func() {
		for ev := range w.Events {
			mu.Lock()
			seen = append(seen, ev)
			mu.Unlock()
		}
	})
	wg.Go(func() {
		for range w.Errors {
		}
	})
	t.Cleanup(func() {
		_ = w.Close()
		wg.Wait()
	})
	return w, closes, func() []fsnotify.Event {
		mu.Lock()
		defer mu.Unlock()
		return append([]fsnotify.Event(nil), seen...)
	}
}

// TestOSWatcher_EachHandleIsClosedOnceWhateverRacesTheRemove: a watch is
// removed right after a change in its directory, so that the read that
// reported it may complete before or after the Remove; each watch's handle
// is closed exactly once, when its Remove returns, and never again (a
// second close would close a handle Windows had since given to someone
// else, the Go runtime most often). Close ends the watches left.
func TestOSWatcher_EachHandleIsClosedOnceWhateverRacesTheRemove(t *testing.T) {
	w, closes, _ := countingWatcher(t)
	dir := newDir(t)
	const rounds = 300
	for i := range rounds {
		require.NoError(t, w.Add(dir))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "f"+strconv.Itoa(i%4)), []byte("x"), 0o644))
		if i%3 == 0 {
			time.Sleep(time.Duration(i%5) * 100 * time.Microsecond)
		}
		require.NoError(t, w.Remove(dir))
		require.Equal(t, int64(i+1), closes.Load(), "round %d: one close per watch, by the time Remove returns", i)
	}
	other := newDir(t)
	require.NoError(t, w.Add(dir))
	require.NoError(t, w.Add(other))
	require.NoError(t, w.Add(other), "a directory watched already is kept")
	require.NoError(t, os.WriteFile(filepath.Join(other, "g"), nil, 0o644))
	require.NoError(t, w.Close())
	assert.Equal(t, int64(rounds+2), closes.Load(), "Close closes each watch left once")
	time.Sleep(quiet)
	assert.Equal(t, int64(rounds+2), closes.Load(), "and nothing is closed afterwards")
	assert.ErrorIs(t, w.Add(dir), fsnotify.ErrClosed)
	assert.NoError(t, w.Close(), "closing twice is fine")
}

// TestOSWatcher_ReportsNamesMadeRemovedAndRenamed: the events of a
// directory's entries, by path, and the refusals of Add and Remove.
func TestOSWatcher_ReportsNamesMadeRemovedAndRenamed(t *testing.T) {
	w, _, events := countingWatcher(t)
	dir := newDir(t)
	require.NoError(t, w.Add(dir))
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	require.NoError(t, os.WriteFile(a, []byte("x"), 0o644))
	require.NoError(t, os.Rename(a, b))
	require.NoError(t, os.Remove(b))
	want := []fsnotify.Event{{Name: a, Op: fsnotify.Create}, {Name: a, Op: fsnotify.Rename},
		{Name: b, Op: fsnotify.Create}, {Name: b, Op: fsnotify.Remove}}
	require.Eventually(t, func() bool {
		seen := map[fsnotify.Event]bool{}
		for _, ev := range events() {
			seen[ev] = true
		}
		for _, ev := range want {
			if !seen[ev] {
				return false
			}
		}
		return true
	}, guard, time.Millisecond, "want %v", want)

	require.ErrorIs(t, w.Remove(newDir(t)), fsnotify.ErrNonExistentWatch)
	file := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	require.Error(t, w.Add(file), "a file is no directory to watch")
	require.Error(t, w.Add(filepath.Join(dir, "missing")))
}
