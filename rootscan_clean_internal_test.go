package jobstore

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/axqua/jobstore/internal/dirstamp"
	"github.com/axqua/jobstore/internal/testdir"
)

// serverBehind is how far the clock that stamps the test's directory is
// behind this host's: a file server's, far past any skew a clock-based
// rule could allow for.
const serverBehind = time.Hour

// cleanConsumer drives one user of cleanStamp over a root holding job "j":
// look makes it look at the job at now (the stamps' clock), and reports
// whether it read the job's records, and the state it then knows ("": no
// status).
type cleanConsumer struct {
	name  string
	start func(t *testing.T, root string, frozen dirstamp.Stamp, now *time.Time) (look func() (read bool, st State))
}

// TestCleanStamp_ChangeWithinATickIsReadAgainByEveryView: a job whose
// status.json is written within the tick of the look that read it (so
// that its directory's stamp does not move), stamped by a server clock far
// behind this host's, is read again by StartNext's view and by WatchRoot
// at their first look a tick later, which sees it queued; after that read
// the job is read no more.
func TestCleanStamp_ChangeWithinATickIsReadAgainByEveryView(t *testing.T) {
	consumers := []cleanConsumer{
		{"StartNext", startNextConsumer},
		{"WatchRoot", watchRootConsumer},
	}
	ticks := []struct {
		name string
		frac int64 // the stamp's fraction of a second
	}{
		{"fine timestamps", 123456789},
		{"whole-second timestamps", 0},
	}
	for _, c := range consumers {
		for _, tk := range ticks {
			t.Run(c.name+"/"+tk.name, func(t *testing.T) {
				root := testdir.New(t)
				dir, err := DirFor(root, "j")
				require.NoError(t, err)
				require.NoError(t, WriteSpec(dir, JobSpec{ID: "j", Kind: "test"}, NoSync()))
				mtime := time.Unix(time.Now().Add(-serverBehind).Unix(), tk.frac)
				frozen := freezeDirTime(t, string(dir), mtime)
				now := time.Now()
				look := c.start(t, root, frozen, &now)

				read, st := look()
				require.True(t, read, "the first look reads the job")
				require.Empty(t, st, "no status.json yet")

				// Its submitter writes status.json within the same tick:
				// the stamp stays as it was.
				require.NoError(t, WriteStatus(dir, JobStatus{State: Queued, Seq: 1}, NoSync()))
				freezeDirTime(t, string(dir), mtime)

				now = now.Add(dirstamp.Tick(frozen.Mtime))
				read, st = look()
				require.True(t, read, "a look a tick later reads the job again")
				require.Equal(t, Queued, st, "and sees the change its stamp did not show")

				now = now.Add(dirstamp.Tick(frozen.Mtime))
				read, _ = look()
				require.False(t, read, "a clean stamp, unchanged: not read")
			})
		}
	}
}

// freezeDirTime sets path's times to mtime, as a server whose clock is
// behind this host's stamps them, and returns its stamp.
func freezeDirTime(t *testing.T, path string, mtime time.Time) dirstamp.Stamp {
	t.Helper()
	require.NoError(t, os.Chtimes(path, mtime, mtime))
	d, err := dirstamp.Open(filepath.Dir(path))
	require.NoError(t, err)
	defer d.Close()
	st, err := d.Lstat(filepath.Base(path))
	require.NoError(t, err)
	return st
}

// startNextConsumer is StartNext's view, whose stat of the job's directory
// gives the frozen stamp, its change time the server's too (Chtimes set it
// by this host's clock).
func startNextConsumer(t *testing.T, root string, frozen dirstamp.Stamp, now *time.Time) func() (bool, State) {
	frozen.Ctime = frozen.Mtime
	tc := newTestNextCache(root, 0)
	tc.clock = func() time.Time { return *now }
	tc.firstLookAlone = true // no full scan, whose reads would hide the rule's
	markLiveIn(JobDir(filepath.Join(root, "j")))
	tc.stat = func(d *dirstamp.Dir, name string) (dirstamp.Stamp, error) { return frozen, nil }
	return func() (bool, State) {
		t.Helper()
		names, reads, _ := tc.lookCounting(t)
		if len(names) == 1 {
			return reads > 0, Queued
		}
		e := tc.entries["j"]
		require.NotNil(t, e)
		require.Equal(t, stateIncomplete, e.state)
		return reads > 0, ""
	}
}

// watchRootConsumer is WatchRoot's poll (no events), driven by hand.
func watchRootConsumer(t *testing.T, root string, _ dirstamp.Stamp, now *time.Time) func() (bool, State) {
	w, err := newRootWatch(root, watchOptions{poll: time.Hour}, nil)
	require.NoError(t, err)
	t.Cleanup(w.releaseAll)
	w.clock = func() time.Time { return *now }
	first := true
	return func() (bool, State) {
		t.Helper()
		if first { // the first listing: read, then settled
			w.startScan()
			for w.scanned != nil {
				<-w.scanReady
				w.takeScan()
			}
			w.settle(len(w.jobs))
		} else {
			w.pollJobs()
		}
		j := w.jobs["j"]
		require.NotNil(t, j)
		read := first
		first = false
		for q := w.toRead.peek(); q != nil; q = w.toRead.peek() {
			w.toRead.pop()
			q.waiting = false
			mask := q.want
			q.want = 0
			w.applyRead(readJob(q, mask, true))
			read = true
		}
		if j.status == nil {
			return read, ""
		}
		return read, j.status.State
	}
}
