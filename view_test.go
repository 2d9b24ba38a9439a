package jobstore_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// viewWaits is how long a test leaves a StartNext call waiting on an
// empty root before it ends it: long enough for the call to have made its
// watch and begun its scan, which is what must not remain.
const viewWaits = 100 * time.Millisecond

// baseline is what the process holds before a test makes a view: its
// goroutines and open descriptors (-1 where they are not counted).
type baseline struct{ goroutines, fds int }

// takeBaseline checks that no other test left an OS watcher behind and
// returns the process's goroutines and descriptors.
func takeBaseline(t *testing.T) baseline {
	t.Helper()
	requireNothingWatched(t, "no other test's watcher is left")
	return baseline{runtime.NumGoroutine(), openFiles(t)}
}

// requireBackTo checks that no watch remains and that goroutines and
// descriptors are back to b.
func requireBackTo(t *testing.T, b baseline, what string) {
	t.Helper()
	requireNothingWatched(t, what+": no watch left")
	assert.LessOrEqual(t, goroutinesBackTo(t, b.goroutines), b.goroutines, what+": goroutines back to the baseline")
	if b.fds >= 0 {
		assert.LessOrEqual(t, openFiles(t), b.fds, what+": descriptors back to the baseline")
	}
}

// A plain StartNext call keeps nothing once it returns, however it ends:
// no watch, no goroutine (its scan's, its events'), no descriptor.
func TestStartNext_LeavesNothingBehindWhenItReturns(t *testing.T) {
	cases := []struct {
		name string
		call func(t *testing.T, root string)
	}{
		{"looked once", func(t *testing.T, root string) {
			r, err := jobstore.StartNext(doneCtx(), root, jobstore.WithKinds("absent"))
			require.Nil(t, r)
			require.ErrorIs(t, err, context.Canceled)
		}},
		{"waited", func(t *testing.T, root string) {
			ctx, cancel := context.WithTimeout(context.Background(), viewWaits)
			defer cancel()
			r, err := jobstore.StartNext(ctx, root, jobstore.WithKinds("absent"))
			require.Nil(t, r)
			require.ErrorIs(t, err, context.DeadlineExceeded)
		}},
		{"started a job", func(t *testing.T, root string) {
			ctx, cancel := context.WithTimeout(context.Background(), waitGuard)
			defer cancel()
			r, err := jobstore.StartNext(ctx, root)
			require.NoError(t, err)
			require.NoError(t, r.Close())
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := tempDir(t)
			for i := range 20 {
				_, err := jobstore.Submit(root, jobstore.JobSpec{ID: fmt.Sprint("j", i), Kind: "k"})
				require.NoError(t, err)
			}
			b := takeBaseline(t)
			tc.call(t, root)
			requireBackTo(t, b, "after StartNext returned")
		})
	}
}

// Close ends a View's waiting StartNext calls (fs.ErrClosed) and its
// WatchRoot channels, and returns once nothing of the view remains.
func TestView_CloseEndsItsCallsAndLeavesNothingBehind(t *testing.T) {
	root := tempDir(t)
	writeJob(t, root, specAt("other", 0), statusIn(jobstore.Queued, 1))
	b := takeBaseline(t)
	v, err := jobstore.OpenView(root)
	require.NoError(t, err)

	waited := make(chan error, 2)
	var calls sync.WaitGroup
	for range 2 {
		calls.Go(func() {
			r, err := v.StartNext(context.Background(), jobstore.WithKinds("absent"))
			if r != nil {
				t.Error("started a job of a kind it does not take")
			}
			waited <- err
		})
	}
	updates, err := v.WatchRoot(context.Background())
	require.NoError(t, err)
	for u := range updates {
		if u.Synced {
			break
		}
	}
	time.Sleep(viewWaits) // the calls wait, their watch made
	require.NoError(t, v.Close())
	calls.Wait() // Close returned: so have they
	for range 2 {
		err := <-waited
		require.ErrorIs(t, err, fs.ErrClosed)
		var je *jobstore.Error
		require.ErrorAs(t, err, &je)
	}
	select {
	case _, open := <-updates:
		for open {
			_, open = <-updates
		}
	default:
		t.Fatal("WatchRoot's channel still open after Close returned")
	}
	requireBackTo(t, b, "after Close")
	require.NoError(t, v.Close(), "a second Close does nothing")
}

// A closed view refuses every call with fs.ErrClosed; a root that cannot
// be read is OpenView's error at once.
func TestView_RefusesCallsOnceClosedAndAMissingRoot(t *testing.T) {
	root := tempDir(t)
	v, err := jobstore.OpenView(root)
	require.NoError(t, err)
	require.NoError(t, v.Close())
	_, err = v.StartNext(doneCtx())
	require.ErrorIs(t, err, fs.ErrClosed)
	_, err = v.WatchRoot(context.Background())
	require.ErrorIs(t, err, fs.ErrClosed)

	_, err = jobstore.OpenView(root + "/missing")
	var je *jobstore.Error
	require.ErrorAs(t, err, &je)
	require.ErrorIs(t, err, fs.ErrNotExist)
}

// The StartNext calls of a view, of another view and plain ones, all at
// once, start each job exactly once.
func TestView_CallsStartEachJobOnce(t *testing.T) {
	const jobs, callers = 40, 6
	root := tempDir(t)
	for i := range jobs {
		_, err := jobstore.Submit(root, jobstore.JobSpec{ID: fmt.Sprintf("j%02d", i), Kind: "k"})
		require.NoError(t, err)
	}
	views := []*jobstore.View{openView(t, root), openView(t, root)}
	var mu sync.Mutex
	started := map[string]int{}
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			for {
				var r *jobstore.Run
				var err error
				if i < len(views)*2 {
					r, err = views[i%len(views)].StartNext(doneCtx())
				} else {
					r, err = jobstore.StartNext(doneCtx(), root)
				}
				if errors.Is(err, context.Canceled) {
					return
				}
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				started[r.Dir().ID()]++
				mu.Unlock()
				if err := r.Finish(jobstore.Outcome{State: jobstore.Succeeded}); err != nil {
					t.Error(err) // not Fatal: another goroutine's
				}
				_ = r.Close()
			}
		})
	}
	wg.Wait()
	require.Len(t, started, jobs, "every job started")
	for id, n := range started {
		assert.Equal(t, 1, n, "%s started %d times", id, n)
	}
}
