package jobstore_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/internal/testdir"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rootQuiet is how long a WatchRoot that must stay silent is given to
// misbehave: an event or several fast polls.
const rootQuiet = 200 * time.Millisecond

// rootModes are the two ways WatchRoot learns of a change. On Linux the
// event mode keeps the poll slow, so that what arrives came by an event;
// elsewhere events do not tell everything (WatchRoot polls every job as
// well), and the poll is fast there too.
var rootModes = []struct {
	name string
	opts []jobstore.WatchOption
}{
	{"events", []jobstore.WatchOption{jobstore.WithPollInterval(eventsModePoll())}},
	{"poll only", []jobstore.WatchOption{jobstore.WithoutEvents(), jobstore.WithPollInterval(fastPoll)}},
}

// skipRemovalUnderWine skips, in the event mode, a test that removes a
// watched directory: Wine reports nothing of it and keeps it (delete
// pending) until the watch ends, which it never does.
func skipRemovalUnderWine(t *testing.T, mode string) {
	t.Helper()
	if mode == "events" && testdir.UnderWine() {
		t.Skip("Wine keeps a watched directory that is deleted until its watch ends, and says nothing")
	}
}

func eventsModePoll() time.Duration {
	if runtime.GOOS == "linux" {
		return slowPoll
	}
	return fastPoll
}

// rootFollower receives a WatchRoot's updates and checks, on each, the
// guarantees that hold for any sequence: one first update per job before
// Synced, Synced once, no Removed before Synced, no status after one with
// a higher seq of the same job (until it is Removed). view is the
// receiver's picture of the root.
type rootFollower struct {
	t       testing.TB
	ch      <-chan jobstore.RootUpdate
	synced  bool
	view    map[jobstore.JobDir]jobstore.RootUpdate
	seq     map[jobstore.JobDir]uint64
	removed map[jobstore.JobDir]int
	updates int
}

// followRoot starts WatchRoot on root, cancelled at cleanup.
func followRoot(t testing.TB, root string, opts ...jobstore.WatchOption) *rootFollower {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ch, err := jobstore.WatchRoot(ctx, root, opts...)
	require.NoError(t, err)
	return &rootFollower{t: t, ch: ch, view: map[jobstore.JobDir]jobstore.RootUpdate{},
		seq: map[jobstore.JobDir]uint64{}, removed: map[jobstore.JobDir]int{}}
}

// next receives one update (failing after deadline) and checks it.
func (f *rootFollower) next() (jobstore.RootUpdate, bool) {
	f.t.Helper()
	select {
	case u, ok := <-f.ch:
		if ok {
			f.take(u)
		}
		return u, ok
	case <-time.After(deadline):
		f.t.Fatalf("no update within %v", deadline)
		return jobstore.RootUpdate{}, false
	}
}

func (f *rootFollower) take(u jobstore.RootUpdate) {
	f.t.Helper()
	f.updates++
	switch {
	case u.Synced:
		require.False(f.t, f.synced, "Synced twice")
		require.Empty(f.t, u.Dir)
		f.synced = true
	case u.Dir == "":
		require.Error(f.t, u.Err, "an update about the root says what is wrong")
	case u.Removed:
		require.True(f.t, f.synced, "Removed before Synced: %s", u.Dir)
		_, known := f.view[u.Dir]
		require.True(f.t, known, "Removed for a job never reported: %s", u.Dir)
		require.Nil(f.t, u.Spec)
		require.Nil(f.t, u.Status)
		delete(f.view, u.Dir)
		delete(f.seq, u.Dir)
		f.removed[u.Dir]++
	default:
		if !f.synced {
			_, again := f.view[u.Dir]
			require.False(f.t, again, "two updates of %s before Synced", u.Dir)
		}
		if u.Status != nil {
			require.GreaterOrEqual(f.t, u.Status.Seq, f.seq[u.Dir], "the seq of %s went back", u.Dir)
			f.seq[u.Dir] = u.Status.Seq
		}
		f.view[u.Dir] = u
	}
}

// untilSynced receives up to Synced.
func (f *rootFollower) untilSynced() {
	f.t.Helper()
	for !f.synced {
		_, ok := f.next()
		require.True(f.t, ok, "closed before Synced")
	}
}

// until receives until cond holds for an update.
func (f *rootFollower) until(what string, cond func(u jobstore.RootUpdate) bool) jobstore.RootUpdate {
	f.t.Helper()
	for {
		u, ok := f.next()
		require.True(f.t, ok, "closed while waiting for %s", what)
		if cond(u) {
			return u
		}
	}
}

// mustBeQuiet fails if an update arrives within rootQuiet.
func (f *rootFollower) mustBeQuiet() {
	f.t.Helper()
	select {
	case u, ok := <-f.ch:
		f.t.Fatalf("unexpected update %+v (open %v)", u, ok)
	case <-time.After(rootQuiet):
	}
}

// requireMatchesList fails unless the view equals what List reads now:
// the same jobs, each with the same spec, status seq and state, and error.
func (f *rootFollower) requireMatchesList(root string) {
	f.t.Helper()
	entries, err := jobstore.List(root)
	require.NoError(f.t, err)
	want := map[jobstore.JobDir]string{}
	for _, e := range entries {
		want[e.Dir] = summary(e.Spec, e.Status, e.Err)
	}
	got := map[jobstore.JobDir]string{}
	for dir, u := range f.view {
		got[dir] = summary(u.Spec, u.Status, u.Err)
	}
	require.Equal(f.t, want, got)
}

// removeTree removes path and everything below it, bottom-up, making each
// entry writable first: job.json and cancel.json are read-only, which
// Windows will not remove, and Wine's os.RemoveAll fails.
func removeTree(t testing.TB, path string) {
	t.Helper()
	var paths []string
	require.NoError(t, filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err == nil {
			paths = append(paths, p)
		}
		return err
	}))
	for i := len(paths) - 1; i >= 0; i-- {
		_ = os.Chmod(paths[i], 0o755)
		// On Windows a poller that holds a directory open for its listing
		// makes the deletion fail for that instant (a sharing violation).
		end := time.Now().Add(deadline)
		for {
			err := os.Remove(paths[i])
			if err == nil || runtime.GOOS != "windows" || time.Now().After(end) {
				require.NoError(t, err)
				break
			}
			time.Sleep(time.Millisecond)
		}
	}
}

// renameOver renames from over to, retrying for a while on Windows, where a
// reader holding to open makes the rename fail (as the library's writers
// retry).
func renameOver(t testing.TB, from, to string) {
	t.Helper()
	end := time.Now().Add(deadline)
	for {
		err := os.Rename(from, to)
		if err == nil || runtime.GOOS != "windows" || time.Now().After(end) {
			require.NoError(t, err)
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// summary is what a comparison of a job's records looks at.
func summary(spec *jobstore.JobSpec, st *jobstore.JobStatus, err error) string {
	s := "spec:-"
	if spec != nil {
		s = fmt.Sprintf("spec:%s/%s/%s", spec.ID, spec.Kind, spec.SubmittedAt.Format(time.RFC3339Nano))
	}
	if st != nil {
		s += fmt.Sprintf(" status:%s/%d", st.State, st.Seq)
	}
	if err != nil {
		s += " err:" + string(jobstore.ErrorCode(err))
	}
	return s
}

// TestWatchRoot_FirstEachJobThenSyncedThenChanges: the first updates are
// the jobs List reads (a queued job, a running one, one without
// status.json, a cancelled request, a directory without job.json), one
// each, then Synced; then a status change, a cancel request, a job added
// and a job removed arrive as one update each, by events alone and by the
// poll alone.
func TestWatchRoot_FirstEachJobThenSyncedThenChanges(t *testing.T) {
	for _, mode := range rootModes {
		t.Run(mode.name, func(t *testing.T) {
			skipRemovalUnderWine(t, mode.name)
			root := tempDir(t)
			queued := writeJob(t, root, specAt("queued", 1), statusIn(jobstore.Queued, 1))
			running := writeJob(t, root, specAt("running", 2), statusIn(jobstore.Running, 5))
			writeJob(t, root, specAt("nostatus", 3), nil)
			asked := writeJob(t, root, specAt("asked", 4), statusIn(jobstore.Running, 2))
			require.NoError(t, jobstore.RequestCancel(asked, jobstore.CancelRequest{Reason: "test"}))
			require.NoError(t, os.Mkdir(filepath.Join(root, "notajob"), 0o755))
			require.NoError(t, os.Mkdir(filepath.Join(root, ".hidden"), 0o755))
			writeFile(t, filepath.Join(root, "stray.txt"), []byte("x"))

			f := followRoot(t, root, mode.opts...)
			f.untilSynced()
			assert.Equal(t, 6, f.updates, "five jobs and Synced")
			f.requireMatchesList(root)
			assert.NotNil(t, f.view[asked].Cancel)
			assert.Equal(t, "test", f.view[asked].Cancel.Reason)
			assert.ErrorIs(t, f.view[jobstore.JobDir(filepath.Join(root, "notajob"))].Err, jobstore.ErrNotJob)

			require.NoError(t, jobstore.WriteStatus(running, *statusIn(jobstore.Running, 6), jobstore.NoSync()))
			u := f.until("running's seq 6", func(u jobstore.RootUpdate) bool { return u.Dir == running })
			assert.Equal(t, uint64(6), u.Status.Seq)
			assert.NotNil(t, u.Spec, "an update carries every record")

			require.NoError(t, jobstore.WriteStatus(queued, *statusIn(jobstore.Running, 2), jobstore.NoSync()))
			require.NoError(t, jobstore.RequestCancel(queued, jobstore.CancelRequest{Reason: "later"}))
			f.until("queued's request", func(u jobstore.RootUpdate) bool { return u.Dir == queued && u.Cancel != nil })

			added := writeJob(t, root, specAt("added", 5), statusIn(jobstore.Queued, 1))
			f.until("the added job", func(u jobstore.RootUpdate) bool { return u.Dir == added && u.Status != nil })

			removeTree(t, string(asked))
			f.until("the removal", func(u jobstore.RootUpdate) bool { return u.Removed && u.Dir == asked })
			f.requireMatchesList(root)
		})
	}
}

// TestWatchRoot_NeverAnOlderStatus: a job rewritten 300 times while the
// receiver takes its time: every status it gets has a higher seq than the
// one before, and the last is the last written. A status with a lower seq
// put in place afterwards (a writer that went back) is not delivered.
func TestWatchRoot_NeverAnOlderStatus(t *testing.T) {
	for _, mode := range rootModes {
		t.Run(mode.name, func(t *testing.T) {
			root := tempDir(t)
			dir := writeJob(t, root, specAt("busy", 1), statusIn(jobstore.Running, 1))
			f := followRoot(t, root, mode.opts...)
			f.untilSynced()
			const writes = 300
			done := make(chan error, 1)
			go func() {
				for seq := uint64(2); seq <= writes; seq++ {
					if err := jobstore.WriteStatus(dir, *statusIn(jobstore.Running, seq), jobstore.NoSync()); err != nil {
						done <- err
						return
					}
				}
				done <- nil
			}()
			var got []uint64
			f.until("the last write", func(u jobstore.RootUpdate) bool {
				time.Sleep(time.Millisecond) // a slow receiver
				got = append(got, u.Status.Seq)
				return u.Status.Seq == writes
			})
			require.NoError(t, <-done)
			require.True(t, slices.IsSorted(got), "seqs in order: %v", got)
			require.Equal(t, len(got), len(slices.Compact(slices.Clone(got))), "no update repeated: %v", got)
			t.Logf("%d of %d statuses delivered", len(got), writes-1)

			// WriteStatus refuses to go back: another writer, renaming its file
			// in as the format says.
			back := *statusIn(jobstore.Running, 7)
			back.SchemaVersion, back.JobID = jobstore.StatusSchemaVersion, dir.ID()
			writeRecord(t, filepath.Join(string(dir), ".status.json.other"), back)
			renameOver(t, filepath.Join(string(dir), ".status.json.other"), dir.StatusPath())
			f.mustBeQuiet()
		})
	}
}

// TestWatchRoot_JobReplacedUnderItsNameIsRemovedThenNew: a job directory
// removed and made again with another job of the same ID (a lower seq)
// between two looks is reported as Removed, then as the new job.
func TestWatchRoot_JobReplacedUnderItsNameIsRemovedThenNew(t *testing.T) {
	for _, mode := range rootModes {
		t.Run(mode.name, func(t *testing.T) {
			skipRemovalUnderWine(t, mode.name)
			root := tempDir(t)
			dir := writeJob(t, root, specAt("again", 1), statusIn(jobstore.Succeeded, 9))
			f := followRoot(t, root, mode.opts...)
			f.untilSynced()
			// Built aside and renamed over, so that no look finds it missing.
			aside := filepath.Join(root, ".aside")
			require.NoError(t, os.Rename(string(dir), aside))
			writeJob(t, root, specAt("again", 2), statusIn(jobstore.Queued, 1))
			removeTree(t, aside)
			f.until("the new job", func(u jobstore.RootUpdate) bool { return u.Dir == dir && u.Status != nil && u.Status.Seq == 1 })
			assert.Equal(t, 1, f.removed[dir], "the old job was removed first")
			f.requireMatchesList(root)
		})
	}
}

// TestWatchRoot_DegradesToThePollBeyondTheWatchLimit: when the OS gives
// no more watches, the jobs left unwatched are polled: no error, and a
// change of every job, watched or not, is delivered.
func TestWatchRoot_DegradesToThePollBeyondTheWatchLimit(t *testing.T) {
	root := tempDir(t)
	var dirs []jobstore.JobDir
	for i := range 12 {
		dirs = append(dirs, writeJob(t, root, specAt(fmt.Sprint("j", i), i), statusIn(jobstore.Running, 1)))
	}
	before, _ := jobstore.WatchedDirs()
	f := followRoot(t, root, jobstore.WithMaxWatches(4), jobstore.WithPollInterval(fastPoll))
	f.untilSynced()
	for _, dir := range dirs {
		require.NoError(t, jobstore.WriteStatus(dir, *statusIn(jobstore.Succeeded, 2), jobstore.NoSync()))
	}
	for len(dirs) > 0 {
		u := f.until("a job's seq 2", func(u jobstore.RootUpdate) bool { return u.Status != nil && u.Status.Seq == 2 })
		dirs = slices.DeleteFunc(dirs, func(d jobstore.JobDir) bool { return d == u.Dir })
	}
	// Every job has been watched or handed to the poll by now (a job whose
	// change was seen was): four watched, and the root.
	if n, hub := jobstore.WatchedDirs(); hub {
		assert.Equal(t, 4+1, n-before, "four job directories and the root watched")
	}
}

// TestWatchRoot_RacilyCleanDirectoryIsReadAgain: with the poll alone, a
// status written after the poll read the job, within the same tick of the
// directory's clock (made so by setting its time back), is still
// delivered: a directory read within two seconds of its time being first
// seen is read again.
func TestWatchRoot_RacilyCleanDirectoryIsReadAgain(t *testing.T) {
	root := tempDir(t)
	dir := writeJob(t, root, specAt("racy", 1), statusIn(jobstore.Running, 1))
	f := followRoot(t, root, jobstore.WithoutEvents(), jobstore.WithPollInterval(fastPoll))
	f.untilSynced()
	require.NoError(t, jobstore.WriteStatus(dir, *statusIn(jobstore.Running, 2), jobstore.NoSync()))
	f.until("seq 2", func(u jobstore.RootUpdate) bool { return u.Dir == dir && u.Status.Seq == 2 })
	fi, err := os.Stat(string(dir))
	require.NoError(t, err)
	require.NoError(t, jobstore.WriteStatus(dir, *statusIn(jobstore.Running, 3), jobstore.NoSync()))
	require.NoError(t, os.Chtimes(string(dir), fi.ModTime(), fi.ModTime())) // the same tick
	f.until("seq 3", func(u jobstore.RootUpdate) bool { return u.Dir == dir && u.Status.Seq == 3 })
}

// TestWatchRoot_RootRemovedAndBack: a root removed has its jobs Removed
// and is an update with Err and no Dir; made again, its jobs come back.
func TestWatchRoot_RootRemovedAndBack(t *testing.T) {
	for _, mode := range rootModes {
		t.Run(mode.name, func(t *testing.T) {
			skipRemovalUnderWine(t, mode.name)
			root := filepath.Join(tempDir(t), "root")
			dir := writeJob(t, root, specAt("j1", 1), statusIn(jobstore.Running, 1))
			opts := append(slices.Clone(mode.opts), jobstore.WithPollInterval(fastPoll))
			f := followRoot(t, root, opts...)
			f.untilSynced()
			removeTree(t, root)
			var removed, rootErr bool
			f.until("the removal and the root's error", func(u jobstore.RootUpdate) bool {
				removed = removed || u.Removed && u.Dir == dir
				rootErr = rootErr || u.Dir == "" && errors.Is(u.Err, os.ErrNotExist)
				return removed && rootErr
			})
			writeJob(t, root, specAt("j1", 1), statusIn(jobstore.Running, 1))
			f.until("the job back", func(u jobstore.RootUpdate) bool { return u.Dir == dir && u.Status != nil })
		})
	}
}

// TestWatchRoot_MissingRootIsAnErrorAtOnce: as List, a root that cannot be
// read is an *Error at once, and nothing is left running.
func TestWatchRoot_MissingRootIsAnErrorAtOnce(t *testing.T) {
	ch, err := jobstore.WatchRoot(context.Background(), filepath.Join(tempDir(t), "missing"))
	assert.Nil(t, ch)
	assert.ErrorIs(t, err, os.ErrNotExist)
	var e *jobstore.Error
	assert.ErrorAs(t, err, &e)
	requireNothingWatched(t, "no watch left behind")
}

// TestWatchRoot_ReleasesEverythingWhenCtxIsDone: the channel closes, and
// goroutines, descriptors and watches are back to what they were.
func TestWatchRoot_ReleasesEverythingWhenCtxIsDone(t *testing.T) {
	root := tempDir(t)
	for i := range 20 {
		writeJob(t, root, specAt(fmt.Sprint("j", i), i), statusIn(jobstore.Running, 1))
	}
	requireNothingWatched(t, "no other test's watcher is left")
	goroutines, fds := runtime.NumGoroutine(), settledOpenFiles(t)
	ctx, cancel := context.WithCancel(context.Background())
	ch, err := jobstore.WatchRoot(ctx, root)
	require.NoError(t, err)
	for u := range ch {
		if u.Synced {
			break
		}
	}
	cancel()
	for range ch {
	}
	requireNothingWatched(t, "the shared watcher is closed")
	assert.LessOrEqual(t, goroutinesBackTo(t, goroutines), goroutines, "goroutines back to the baseline")
	if fds >= 0 {
		assert.Equal(t, fds, openFiles(t), "descriptors back to the baseline")
	}
}

// TestWatchRoot_ChangesBeforeSyncedComeAfterIt: a status written and a job
// added after WatchRoot returned, before the receiver took anything: the
// first listing's jobs each come once (job-00 with seq 1 or 2), then
// Synced, then the added job and, unless its first update had it already,
// job-00's seq 2.
func TestWatchRoot_ChangesBeforeSyncedComeAfterIt(t *testing.T) {
	for _, mode := range rootModes {
		t.Run(mode.name, func(t *testing.T) {
			root := tempDir(t)
			var dirs []jobstore.JobDir
			for i := range 50 {
				dirs = append(dirs, writeJob(t, root, specAt(fmt.Sprintf("job-%02d", i), i), statusIn(jobstore.Running, 1)))
			}
			f := followRoot(t, root, mode.opts...)
			require.NoError(t, jobstore.WriteStatus(dirs[0], *statusIn(jobstore.Running, 2), jobstore.NoSync()))
			added := writeJob(t, root, specAt("added", 99), statusIn(jobstore.Queued, 1))
			time.Sleep(rootQuiet) // let the watch see both before the receiver takes anything
			f.untilSynced()
			assert.Equal(t, len(dirs)+1, f.updates, "the first listing's jobs, then Synced")
			_, early := f.view[added]
			assert.False(t, early, "a job added after the listing comes after Synced")
			f.until("the added job", func(u jobstore.RootUpdate) bool { return u.Dir == added })
			if f.view[dirs[0]].Status.Seq != 2 {
				f.until("job-00's seq 2", func(u jobstore.RootUpdate) bool { return u.Dir == dirs[0] && u.Status.Seq == 2 })
			}
		})
	}
}

// TestWatchRoot_EmptyRootSyncsAtOnceAndSeesLaterJobs: a root with no job
// (empty, holding only the directory Submit builds in, or emptied by
// Remove) gets Synced first, at once, and then every job submitted later.
func TestWatchRoot_EmptyRootSyncsAtOnceAndSeesLaterJobs(t *testing.T) {
	roots := map[string]func(t *testing.T) string{
		"empty": func(t *testing.T) string { return tempDir(t) },
		"only .submit": func(t *testing.T) string {
			root := tempDir(t)
			require.NoError(t, os.Mkdir(filepath.Join(root, ".submit"), 0o755))
			return root
		},
		"emptied by Remove": func(t *testing.T) string {
			root := tempDir(t)
			dir, err := jobstore.Submit(root, specAt("gone", 0))
			require.NoError(t, err)
			require.NoError(t, jobstore.WriteStatus(dir, *statusIn(jobstore.Succeeded, 2)))
			require.NoError(t, jobstore.Remove(dir))
			return root
		},
	}
	for name, makeRoot := range roots {
		for _, mode := range rootModes {
			t.Run(name+"/"+mode.name, func(t *testing.T) {
				root := makeRoot(t)
				f := followRoot(t, root, mode.opts...)
				u, ok := f.next()
				require.True(t, ok)
				require.True(t, u.Synced, "the first update of a root with no job is Synced: %+v", u)

				for i, id := range []string{"first", "second"} {
					dir, err := jobstore.Submit(root, specAt(id, i+1))
					require.NoError(t, err)
					u := f.until(id, func(u jobstore.RootUpdate) bool { return u.Dir == dir && u.Spec != nil })
					assert.Equal(t, id, u.Spec.ID)
				}
				f.requireMatchesList(root)
			})
		}
	}
}
