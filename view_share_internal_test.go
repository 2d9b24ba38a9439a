package jobstore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/axqua/jobstore/internal/fsevents"
	"github.com/axqua/jobstore/internal/testdir"
)

// shareWait bounds how long the test waits for a View's consumers to see a
// change.
const shareWait = 30 * time.Second

// TestView_WatchRootAndStartNextShareOneWatchAndOneListing: a View with a
// StartNext loop running and a WatchRoot channel open holds one
// subscription of its root and one of a job directory both follow, which
// follows the union of the files each wants (a cancel request, which
// StartNext does not follow there, reaches WatchRoot), and makes one
// listing of the root for both after a change that makes both list it
// (a job added, and the root's events lost).
func TestView_WatchRootAndStartNextShareOneWatchAndOneListing(t *testing.T) {
	root := testdir.New(t)
	incomplete := JobDir(filepath.Join(root, "incomplete"))
	require.NoError(t, WriteSpec(incomplete, JobSpec{ID: "incomplete", Kind: "k"}, NoSync())) // no status.json: StartNext follows it
	_, err := Submit(root, JobSpec{ID: "other", Kind: "other"})                               // makes LiveDir
	require.NoError(t, err)
	v, err := OpenView(root)
	require.NoError(t, err)
	t.Cleanup(func() { _ = v.Close() })
	frozen := time.Now()
	v.view.list.clock = func() time.Time { return frozen } // no stamp gets clean: only a change or a loss lists again
	ctx, cancel := context.WithCancel(context.Background())

	// The StartNext loop first: it follows the root, LiveDir and the
	// incomplete job's status.json.
	started := make(chan JobDir, 16)
	loop := make(chan struct{})
	go func() {
		defer close(loop)
		for {
			r, err := v.StartNext(ctx, WithKinds("k"))
			if err != nil {
				return
			}
			started <- r.Dir()
			if err := r.Finish(Outcome{State: Succeeded}); err != nil && !errors.Is(err, context.Canceled) {
				t.Error(err)
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-loop })
	require.Eventually(t, func() bool {
		v.c.mu.Lock()
		defer v.c.mu.Unlock()
		ev := v.c.events
		return ev != nil && ev.live != nil && ev.dirs[string(incomplete)] != nil
	}, shareWait, time.Millisecond, "StartNext watches the root, LiveDir and the incomplete job")

	// Then WatchRoot, which follows the root and every job's three records.
	updates, err := v.WatchRoot(ctx)
	require.NoError(t, err)
	seen := make(chan RootUpdate, 16)
	go func() {
		for u := range updates {
			seen <- u
		}
	}()
	for u := range seen {
		if u.Synced {
			break
		}
	}
	// WatchRoot watches the jobs of its first listing after Synced, one
	// after another (settle): wait for both.
	other := filepath.Join(root, "other")
	require.Eventually(t, func() bool {
		v.view.mu.Lock()
		defer v.view.mu.Unlock()
		d := v.view.dirs[string(incomplete)]
		return d != nil && len(d.wants) == 2 && len(v.view.dirs[root].wants) == 2 && v.view.dirs[other] != nil
	}, shareWait, time.Millisecond, "WatchRoot follows the root, the incomplete job and the other job too")
	assert.Equal(t, 1, fsevents.Subscriptions(root), "one subscription of the root")
	assert.Equal(t, 1, fsevents.Subscriptions(string(incomplete)), "one subscription of the job directory both follow")
	dirs, _ := fsevents.Watched()
	assert.Equal(t, 4, dirs, "one OS watch each of the root, LiveDir and the two jobs")

	// The StartNext loop's first full scan is over: from here on, a
	// listing is made again only for a change.
	require.Eventually(t, func() bool { return v.c.scansEnded() > 0 }, shareWait, time.Millisecond)
	made, asked := v.view.list.counts()
	added, err := Submit(root, JobSpec{ID: "added", Kind: "k"})
	require.NoError(t, err)
	v.view.sink.Lose() // as an overflow of the OS's queue: both list the root again
	waitUpdate(t, seen, func(u RootUpdate) bool { return u.Dir == added }, "WatchRoot sees the added job")
	select {
	case d := <-started:
		require.Equal(t, added, d)
	case <-time.After(shareWait):
		t.Fatal("StartNext did not start the added job")
	}
	require.Eventually(t, func() bool { _, a := v.view.list.counts(); return a >= asked+2 }, shareWait, time.Millisecond,
		"both consumers list the root after the loss")
	nowMade, nowAsked := v.view.list.counts()
	assert.Equal(t, made+1, nowMade, "one listing for %d asks", nowAsked-asked)

	// Now that nothing else reads it, a cancel.json made in the incomplete
	// job (damaged, so that nothing else is written there) reaches
	// WatchRoot by the shared subscription's events alone: StartNext
	// follows status.json there, WatchRoot cancel.json too.
	require.NoError(t, os.WriteFile(incomplete.CancelPath(), []byte("{"), 0o644))
	waitUpdate(t, seen, func(u RootUpdate) bool { return u.Dir == incomplete && u.Err != nil },
		"the damaged cancel.json reaches WatchRoot")
}

// waitUpdate receives updates until one satisfies ok.
func waitUpdate(t *testing.T, seen <-chan RootUpdate, ok func(RootUpdate) bool, what string) {
	t.Helper()
	deadline := time.After(shareWait)
	for {
		select {
		case u := <-seen:
			if ok(u) {
				return
			}
		case <-deadline:
			t.Fatal(what + ": not within the wait")
		}
	}
}
