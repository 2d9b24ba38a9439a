package jobstore_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/axqua/jobstore"
)

// finishedBy makes a job under root end in state the way jobstore ends one
// (a runner's Finish, a canceller, a reconciler), so that its directory
// holds what such a job holds: job.lock, the attempt directories, and for
// a cancelled one a read-only cancel.json.
func finishedBy(t *testing.T, root, id string, state jobstore.State) jobstore.JobDir {
	t.Helper()
	dir, err := jobstore.Submit(root, jobstore.JobSpec{ID: id, Kind: "k"})
	require.NoError(t, err)
	switch state {
	case jobstore.Cancelled:
		require.NoError(t, jobstore.RequestCancel(dir, jobstore.CancelRequest{RequestedBy: "test"}))
	case jobstore.Lost:
		r, err := jobstore.Start(dir)
		require.NoError(t, err)
		require.NoError(t, r.Close()) // without Finish: the runner is gone, its attempt ended
		changed, err := jobstore.Reconcile(dir)
		require.NoError(t, err)
		require.True(t, changed)
	default:
		r, err := jobstore.Start(dir)
		require.NoError(t, err)
		require.NoError(t, r.Finish(jobstore.Outcome{State: state}))
		require.NoError(t, r.Close())
	}
	require.Equal(t, state, readStatus(t, dir).State)
	return dir
}

// requireRemoved checks that dir is gone and that its root holds exactly
// want: no hidden leftover of the removal, no temp file.
func requireRemoved(t *testing.T, dir jobstore.JobDir, want ...string) {
	t.Helper()
	require.NoDirExists(t, string(dir))
	root := filepath.Dir(string(dir))
	require.Equal(t, want, names(t, root), "the root must hold nothing else: no hidden leftover")
	_, err := jobstore.ReadSpec(dir)
	require.ErrorIs(t, err, jobstore.ErrNotJob)
	_, err = jobstore.ReadStatus(dir)
	require.ErrorIs(t, err, jobstore.ErrNotJob)
}

func TestRemove_RemovesAFinishedJobWhole(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func(t *testing.T, root string) jobstore.JobDir
	}{
		{"succeeded", func(t *testing.T, root string) jobstore.JobDir { return finishedBy(t, root, "j", jobstore.Succeeded) }},
		{"failed", func(t *testing.T, root string) jobstore.JobDir { return finishedBy(t, root, "j", jobstore.Failed) }},
		{"lost", func(t *testing.T, root string) jobstore.JobDir { return finishedBy(t, root, "j", jobstore.Lost) }},
		{"cancelled, with read-only job.json and cancel.json", func(t *testing.T, root string) jobstore.JobDir {
			dir := finishedBy(t, root, "j", jobstore.Cancelled)
			for _, p := range []string{dir.SpecPath(), dir.CancelPath()} {
				fi, err := os.Stat(p)
				require.NoError(t, err)
				require.Zero(t, fi.Mode().Perm()&0o222, "%s must be read-only for this case to test anything", p)
			}
			return dir
		}},
		{"written by another tool, no attempt", func(t *testing.T, root string) jobstore.JobDir {
			return writeJob(t, root, specAt("j", 0), statusIn(jobstore.Succeeded, 3))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := tempDir(t)
			dir := tc.make(t, root)
			other := finishedBy(t, root, "other", jobstore.Succeeded)
			before := snapshot(t, string(other))

			require.NoError(t, jobstore.Remove(dir))
			requireRemoved(t, dir, "other")
			require.Equal(t, before, snapshot(t, string(other)), "another job must be untouched")
			require.ErrorIs(t, jobstore.Remove(dir), jobstore.ErrNotJob, "a second Remove finds no job")
		})
	}
}

// A job that is not finished, or that another process holds, is refused
// with the error that says why, and left byte for byte as it was.
func TestRemove_RefusesAJobThatIsNotFinishedAndLeavesItAsItWas(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func(t *testing.T, root string) jobstore.JobDir
		want error
		// found is the state the refusal names (ErrWrongState); path, the
		// file an ErrLocked names.
		found, path string
		// onlyBytes: the refusal took job.lock, whose record is written
		// and emptied again, so its mtime moves; names and bytes may not.
		onlyBytes bool
		// says is a part of the refusal's message, where it matters.
		says string
	}{
		{name: "queued, with a cancel request its canceller has not carried out yet", want: jobstore.ErrWrongState, found: "queued",
			says: "with a cancel request not yet carried out", make: func(t *testing.T, root string) jobstore.JobDir {
				dir, err := jobstore.Submit(root, jobstore.JobSpec{ID: "j", Kind: "k"})
				require.NoError(t, err)
				lk, err := jobstore.LockJob(dir) // a Start in progress: the request is left to it
				require.NoError(t, err)
				t.Cleanup(func() { _ = lk.Unlock() })
				require.NoError(t, jobstore.RequestCancel(dir, jobstore.CancelRequest{Reason: "r"}))
				return dir
			}},
		{name: "queued", want: jobstore.ErrWrongState, found: "queued", make: func(t *testing.T, root string) jobstore.JobDir {
			dir, err := jobstore.Submit(root, jobstore.JobSpec{ID: "j", Kind: "k"})
			require.NoError(t, err)
			return dir
		}},
		{name: "no status yet", want: jobstore.ErrWrongState, found: "", make: func(t *testing.T, root string) jobstore.JobDir {
			return writeJob(t, root, specAt("j", 0), nil)
		}},
		{name: "running, runner alive", want: jobstore.ErrWrongState, found: "running", make: func(t *testing.T, root string) jobstore.JobDir {
			dir, err := jobstore.Submit(root, jobstore.JobSpec{ID: "j", Kind: "k"})
			require.NoError(t, err)
			r, err := jobstore.Start(dir)
			require.NoError(t, err)
			t.Cleanup(func() { _ = r.Close() })
			return dir
		}},
		{name: "running, runner gone (not reconciled yet)", want: jobstore.ErrWrongState, found: "running", make: func(t *testing.T, root string) jobstore.JobDir {
			st := statusIn(jobstore.Running, 2)
			st.PID = 1 << 30
			return writeJob(t, root, specAt("j", 0), st)
		}},
		{name: "finished, its runner not closed yet", want: jobstore.ErrLocked, path: jobstore.LockFile, make: func(t *testing.T, root string) jobstore.JobDir {
			dir, err := jobstore.Submit(root, jobstore.JobSpec{ID: "j", Kind: "k"})
			require.NoError(t, err)
			r, err := jobstore.Start(dir)
			require.NoError(t, err)
			require.NoError(t, r.Finish(jobstore.Outcome{State: jobstore.Succeeded}))
			t.Cleanup(func() { _ = r.Close() })
			return dir
		}},
		{name: "finished, a claim in progress", want: jobstore.ErrLocked, path: ".run-2", onlyBytes: true, make: func(t *testing.T, root string) jobstore.JobDir {
			dir := finishedBy(t, root, "j", jobstore.Succeeded)
			// A claimant whose record nothing holds (on another host, say):
			// it is judged by its lease, watched for a whole lease first.
			_, err := jobstore.ClaimAttempt(dir, 2)
			require.NoError(t, err)
			return dir
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := tempDir(t)
			dir := tc.make(t, root)
			before, bytesBefore := snapshot(t, root), contents(t, root)

			err := jobstore.Remove(dir)
			require.ErrorIs(t, err, tc.want)
			e := errOf(t, err)
			if tc.want == jobstore.ErrWrongState {
				require.Equal(t, "state", e.Subject)
				require.Equal(t, tc.found, e.Found)
				require.Contains(t, e.Msg, "only a finished job is removed")
				require.Contains(t, e.Msg, tc.says)
			} else {
				require.Equal(t, filepath.Join(string(dir), tc.path), e.Path)
			}
			require.NotEmpty(t, e.Remedy)
			require.Equal(t, bytesBefore, contents(t, root), "a refused job must be left byte for byte as it was")
			if !tc.onlyBytes {
				require.Equal(t, before, snapshot(t, root), "a refused job must be left as it was, times included")
			}
		})
	}
}

// contents is every name under dir with the bytes of its regular files.
func contents(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for name, st := range snapshot(t, dir) {
		m[name] = st.Data
	}
	return m
}

// A claim whose claimant died before it wrote anything (a starter or a
// remover killed between its claim and its first write) does not block the
// removal of a finished job: on the claimant's own host it is judged gone
// at once by the pid job.lock names, and fenced.
func TestRemove_PassesTheClaimOfAKilledClaimant(t *testing.T) {
	root := tempDir(t)
	dir := finishedBy(t, root, "j", jobstore.Succeeded)
	killedClaimant(t, dir, 2)
	require.NoError(t, jobstore.Remove(dir))
	requireRemoved(t, dir)
}

func TestRemove_RefusesWhatIsNoJobDirectory(t *testing.T) {
	root := tempDir(t)
	finishedBy(t, root, "j", jobstore.Succeeded)
	require.NoError(t, os.Mkdir(filepath.Join(root, "empty"), 0o755))
	before := snapshot(t, root)
	for _, tc := range []struct {
		dir  string
		want error
	}{
		{"/", jobstore.ErrInvalid},
		{root + string(filepath.Separator) + "j" + string(filepath.Separator) + "..", jobstore.ErrInvalid},
		{root + string(filepath.Separator) + ".", jobstore.ErrNotJob}, // the root itself, which holds no job.json
		{filepath.Join(root, "empty"), jobstore.ErrNotJob},
		{filepath.Join(root, "missing"), jobstore.ErrNotJob},
	} {
		require.ErrorIs(t, jobstore.Remove(jobstore.JobDir(tc.dir)), tc.want, "Remove(%q)", tc.dir)
	}
	require.Error(t, jobstore.Remove(jobstore.JobDir(root)), "the root itself holds no job.json")
	require.Equal(t, before, snapshot(t, root), "nothing may be touched")
}

// Prune removes the finished jobs whose finished_at is older than the
// age, leaves the others (younger, queued, running, unreadable), and keeps
// index.json true: the removed jobs' rows go, the others stay as they were.
func TestPrune_RemovesOldFinishedJobsAndKeepsTheIndexTrue(t *testing.T) {
	root := tempDir(t)
	old := time.Now().Add(-48 * time.Hour)
	finished := func(id string, state jobstore.State, at time.Time) {
		st := statusIn(state, 3)
		st.UpdatedAt, st.FinishedAt = at, &at
		writeJob(t, root, specAt(id, 0), st)
	}
	finished("old-ok", jobstore.Succeeded, old)
	finished("old-failed", jobstore.Failed, old)
	finished("old-lost", jobstore.Lost, old)
	finished("young", jobstore.Succeeded, time.Now().Add(-time.Hour))
	noFinish := statusIn(jobstore.Cancelled, 2) // a terminal record without finished_at: updated_at decides
	noFinish.UpdatedAt = old
	writeJob(t, root, specAt("old-no-finished-at", 0), noFinish)
	oldRunning := statusIn(jobstore.Running, 2)
	oldRunning.UpdatedAt = old
	writeJob(t, root, specAt("old-running", 0), oldRunning)
	writeJob(t, root, specAt("queued", 0), statusIn(jobstore.Queued, 1))
	bad := writeJob(t, root, specAt("unreadable", 0), nil)
	writeFile(t, bad.StatusPath(), []byte("{not json"))
	_, err := jobstore.RebuildIndex(root)
	require.NoError(t, err)
	idxBefore, err := jobstore.ReadIndex(root)
	require.NoError(t, err)
	kept := map[string]bool{"young": true, "old-running": true, "queued": true, "unreadable": true}
	keptBefore := map[string]map[string]fileState{}
	for id := range kept {
		keptBefore[id] = snapshot(t, filepath.Join(root, id))
	}

	removed, err := jobstore.Prune(root, 24*time.Hour)
	require.NoError(t, err)
	var ids []string
	for _, d := range removed {
		ids = append(ids, d.ID())
	}
	require.Equal(t, []string{"old-failed", "old-lost", "old-no-finished-at", "old-ok"}, ids)
	require.Equal(t, []string{jobstore.IndexFile, "old-running", "queued", "unreadable", "young"}, names(t, root))
	for id := range kept {
		require.Equal(t, keptBefore[id], snapshot(t, filepath.Join(root, id)), "job %s must be untouched", id)
	}

	idx, err := jobstore.ReadIndex(root)
	require.NoError(t, err)
	var rows []string
	for _, r := range idx.Jobs {
		rows = append(rows, r.ID)
	}
	require.ElementsMatch(t, []string{"old-running", "queued", "young"}, rows, "the index must hold exactly the jobs left")
	require.Equal(t, idxBefore.Unreadable, idx.Unreadable)
	require.True(t, idxBefore.BuiltAt.Equal(idx.BuiltAt), "the rows left are as old as before: built_at stays")

	removed, err = jobstore.Prune(root, 0)
	require.NoError(t, err)
	require.Len(t, removed, 1, "age 0 removes every finished job")
	require.Equal(t, "young", removed[0].ID())
}

// One job that cannot be removed does not stop the others; Prune reports
// it in an *Error for the root that unwraps to that job's own.
func TestPrune_ReportsAJobItCouldNotRemoveAndRemovesTheOthers(t *testing.T) {
	root := tempDir(t)
	for _, id := range []string{"a", "b", "c"} {
		finishedBy(t, root, id, jobstore.Succeeded)
	}
	busy := jobstore.JobDir(filepath.Join(root, "b"))
	lk, err := jobstore.LockJob(busy)
	require.NoError(t, err)
	t.Cleanup(func() { _ = lk.Unlock() })

	removed, err := jobstore.Prune(root, 0)
	require.Len(t, removed, 2)
	require.Equal(t, []string{"a", "c"}, []string{removed[0].ID(), removed[1].ID()})
	require.ErrorIs(t, err, jobstore.ErrLocked)
	e := errOf(t, err)
	require.Equal(t, root, e.Path)
	require.Contains(t, e.Msg, "1 of 3 finished jobs")
	joined, ok := e.Err.(interface{ Unwrap() []error })
	require.True(t, ok, "the failures are joined: %T", e.Err)
	require.Len(t, joined.Unwrap(), 1)
	je := errOf(t, joined.Unwrap()[0])
	require.Equal(t, string(busy), je.Path, "each failure names its job directory")
	require.ErrorIs(t, je, jobstore.ErrLocked)
	require.Equal(t, []string{"b"}, names(t, root))

	_, err = jobstore.Prune(root, -time.Second)
	require.ErrorIs(t, err, jobstore.ErrInvalid)
}

// What a remover that crashed after its rename left (a hidden directory in
// the root) is deleted by Prune once nothing in it has changed for
// DefaultSweepAge; a younger one, which may be a Remove at work, is not.
func TestPrune_DeletesTheLeftoversOfAnInterruptedRemoveOnceTheyAreOld(t *testing.T) {
	root := tempDir(t)
	leftover := func(name string, age time.Duration) string {
		dir := filepath.Join(root, name)
		require.NoError(t, os.MkdirAll(filepath.Join(dir, ".run-2"), 0o755))
		writeFile(t, filepath.Join(dir, jobstore.StatusFile), []byte(`{"state": "succeeded"}`))
		require.NoError(t, os.WriteFile(filepath.Join(dir, jobstore.CancelFile), nil, 0o444))
		when := time.Now().Add(-age)
		for _, p := range []string{filepath.Join(dir, ".run-2"), filepath.Join(dir, jobstore.StatusFile), filepath.Join(dir, jobstore.CancelFile), dir} {
			require.NoError(t, os.Chtimes(p, when, when))
		}
		return dir
	}
	leftover(".remove-j1-123", jobstore.DefaultSweepAge+time.Minute)
	young := leftover(".remove-j2-456", jobstore.DefaultSweepAge-time.Minute)
	touched := leftover(".remove-j3-789", jobstore.DefaultSweepAge+time.Minute)
	now := time.Now()
	require.NoError(t, os.Chtimes(filepath.Join(touched, jobstore.StatusFile), now, now)) // a remover at work inside
	notOurs := filepath.Join(root, ".removed-by-someone")
	require.NoError(t, os.Mkdir(notOurs, 0o755))

	removed, err := jobstore.Prune(root, 0)
	require.NoError(t, err)
	require.Empty(t, removed, "leftovers are no jobs")
	require.Equal(t, []string{".remove-j2-456", ".remove-j3-789", ".removed-by-someone"}, names(t, root))
	require.DirExists(t, young)

	// ReconcileAll (and RebuildIndex) clear them by the same rule.
	age(t, young, jobstore.DefaultSweepAge+time.Minute)
	results, err := jobstore.ReconcileAll(root)
	require.NoError(t, err)
	require.Empty(t, results)
	require.Equal(t, []string{".remove-j3-789", ".removed-by-someone"}, names(t, root))
}

func TestRemove_ErrorsSayWhatToDo(t *testing.T) {
	root := tempDir(t)
	dir, err := jobstore.Submit(root, jobstore.JobSpec{ID: "j", Kind: "k"})
	require.NoError(t, err)
	err = jobstore.Remove(dir)
	e := errOf(t, err)
	require.Equal(t, "remove", e.Op)
	require.Equal(t, dir.StatusPath(), e.Path)
	require.True(t, strings.Contains(e.Msg, "queued"), e.Msg)
	require.Contains(t, e.Remedy, "cancel")
	require.ErrorIs(t, err, jobstore.ErrWrongState)
	require.NotErrorIs(t, err, fs.ErrNotExist)
}

// An index.json that cannot be read is not rewritten: Prune removes the
// jobs all the same and reports the index, naming it, with its cause.
func TestPrune_ReportsAnIndexItCannotUpdate(t *testing.T) {
	root := tempDir(t)
	finishedBy(t, root, "a", jobstore.Succeeded)
	index := filepath.Join(root, jobstore.IndexFile)
	writeFile(t, index, []byte("{not json"))

	removed, err := jobstore.Prune(root, 0)
	require.Len(t, removed, 1)
	require.ErrorIs(t, err, jobstore.ErrCorrupt)
	e := errOf(t, err)
	require.Contains(t, e.Msg, "clean-up after them failed")
	require.Contains(t, err.Error(), index)
	require.Equal(t, []byte("{not json"), readFile(t, index), "an index that cannot be read is left as it was")
	require.Equal(t, []string{jobstore.IndexFile}, names(t, root))
}
