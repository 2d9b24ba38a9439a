//go:build unix

package jobstore_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// outsideRoot makes a directory outside any job root that looks like a job
// (job.json, status.json, an old temp file), so that a call that followed a
// link into it would succeed there instead of failing.
func outsideRoot(t *testing.T, id string) string {
	t.Helper()
	out := filepath.Join(tempDir(t), id)
	writeJob(t, filepath.Dir(out), specAt(id, 0), statusIn(jobstore.Running, 3))
	tmp := filepath.Join(out, ".status.json123")
	require.NoError(t, os.WriteFile(tmp, []byte("{}"), 0o644))
	old := time.Now().Add(-time.Hour)
	require.NoError(t, os.Chtimes(tmp, old, old))
	return out
}

// TestConfinement_JobDirThatIsASymlinkIsNeverFollowed: with root/evil a
// link to a directory elsewhere (or to a sibling job), every writer, reader,
// the lock, the sweep, Remove, Retry, Watch and Wait fail at once with
// ErrNotRegular saying it is a link, and nothing is created, changed or
// removed at the link's target; the same for every spelling of the path
// that names the same entry ("evil/", "evil//", "evil/.", which the kernel
// would resolve through the link).
func TestConfinement_JobDirThatIsASymlinkIsNeverFollowed(t *testing.T) {
	calls := map[string]func(root string, dir jobstore.JobDir) error{
		"WriteSpec": func(_ string, dir jobstore.JobDir) error {
			return jobstore.WriteSpec(dir, jobstore.JobSpec{ID: dir.ID(), Kind: "k"})
		},
		"Submit": func(root string, dir jobstore.JobDir) error {
			_, err := jobstore.Submit(root, jobstore.JobSpec{ID: dir.ID(), Kind: "k"})
			return err
		},
		"WriteStatus": func(_ string, dir jobstore.JobDir) error {
			return jobstore.WriteStatus(dir, jobstore.JobStatus{State: jobstore.Failed})
		},
		"WriteStatus NoSync": func(_ string, dir jobstore.JobDir) error {
			return jobstore.WriteStatus(dir, jobstore.JobStatus{State: jobstore.Failed}, jobstore.NoSync())
		},
		"LockJob": func(_ string, dir jobstore.JobDir) error {
			lk, err := jobstore.LockJob(dir)
			if err == nil {
				_ = lk.Unlock()
			}
			return err
		},
		"Start": func(_ string, dir jobstore.JobDir) error {
			r, err := jobstore.Start(dir)
			if err == nil {
				_ = r.Close()
			}
			return err
		},
		"Reconcile":  func(_ string, dir jobstore.JobDir) error { _, err := jobstore.Reconcile(dir); return err },
		"ReadStatus": func(_ string, dir jobstore.JobDir) error { _, err := jobstore.ReadStatus(dir); return err },
		"ReadSpec":   func(_ string, dir jobstore.JobDir) error { _, err := jobstore.ReadSpec(dir); return err },
		"SweepTemps": func(_ string, dir jobstore.JobDir) error { _, err := jobstore.SweepTemps(dir, 0); return err },
		"RequestCancel": func(_ string, dir jobstore.JobDir) error {
			return jobstore.RequestCancel(dir, jobstore.CancelRequest{Reason: "test"})
		},
		"ReadCancel": func(_ string, dir jobstore.JobDir) error { _, err := jobstore.ReadCancel(dir); return err },
		"Remove":     func(_ string, dir jobstore.JobDir) error { return jobstore.Remove(dir) },
		"Retry":      func(_ string, dir jobstore.JobDir) error { return jobstore.Retry(dir) },
		"Watch": func(_ string, dir jobstore.JobDir) error {
			ctx, cancel := context.WithTimeout(context.Background(), neverAnswersWait)
			defer cancel()
			updates, err := jobstore.Watch(ctx, dir)
			if err == nil {
				for range updates {
				}
			}
			return err
		},
		"Wait": func(_ string, dir jobstore.JobDir) error {
			ctx, cancel := context.WithTimeout(context.Background(), neverAnswersWait)
			defer cancel()
			_, err := jobstore.Wait(ctx, dir)
			return err
		},
	}
	sep := string(filepath.Separator)
	spellings := []string{"", sep, sep + sep, sep + ".", sep + "." + sep}
	for _, where := range []string{"outside the root", "a sibling job"} {
		for _, spelling := range spellings {
			for name, call := range calls {
				t.Run(where+"/"+strconv.Quote("evil"+spelling)+"/"+name, func(t *testing.T) {
					root := tempDir(t)
					target := outsideRoot(t, "evil")
					if where == "a sibling job" {
						target = filepath.Join(root, "other")
						require.NoError(t, os.Rename(outsideRoot(t, "other"), target))
					}
					link := filepath.Join(root, "evil")
					require.NoError(t, os.Symlink(target, link))
					before := snapshotOf(t, target, true)
					dir := jobstore.JobDir(link + spelling)

					err := call(root, dir)
					require.ErrorIs(t, err, jobstore.ErrNotRegular, "%v", err)
					e := errOf(t, err)
					assert.Equal(t, link, e.Path)
					assert.Contains(t, e.Msg, "symbolic link")
					assert.NotContains(t, err.Error(), "removed meanwhile")
					assert.NotEmpty(t, e.Remedy)
					assert.Equal(t, before, snapshotOf(t, target, true), "nothing changed at the link's target")
					fi, err := os.Lstat(link)
					require.NoError(t, err)
					assert.Equal(t, os.ModeSymlink, fi.Mode().Type(), "the link itself is left alone")
				})
			}
		}
	}
}

// neverAnswersWait bounds a Watch or Wait that should return at once but,
// broken, would wait for ever: long enough that a passing call is never
// cut short, short enough that a failing test ends.
const neverAnswersWait = 5 * time.Second

// TestConfinement_LockFileSymlinkIsRefusedAndItsTargetNotCreated: a planted
// job.lock -> /elsewhere/x makes LockJob (and Start) fail with ErrNotRegular;
// /elsewhere/x is never created.
func TestConfinement_LockFileSymlinkIsRefusedAndItsTargetNotCreated(t *testing.T) {
	for _, name := range []string{"LockJob", "Start"} {
		t.Run(name, func(t *testing.T) {
			dir := writeJob(t, tempDir(t), specAt("j1", 0), statusIn(jobstore.Queued, 1))
			elsewhere := filepath.Join(tempDir(t), "x")
			require.NoError(t, os.Symlink(elsewhere, dir.LockPath()))
			var err error
			if name == "LockJob" {
				_, err = jobstore.LockJob(dir)
			} else {
				_, err = jobstore.Start(dir)
			}
			require.ErrorIs(t, err, jobstore.ErrNotRegular)
			assert.Equal(t, dir.LockPath(), errOf(t, err).Path)
			_, serr := os.Lstat(elsewhere)
			assert.ErrorIs(t, serr, os.ErrNotExist, "the link's target was created")
			assert.Equal(t, jobstore.Queued, readStatus(t, dir).State, "Start changed nothing")
		})
	}
}

// TestConfinement_RecordSymlinksAreNotFollowed: status.json or job.json
// that is a link (to a valid record elsewhere) is refused by the readers;
// WriteStatus replaces the link with a regular file and never writes its
// target.
func TestConfinement_RecordSymlinksAreNotFollowed(t *testing.T) {
	out := outsideRoot(t, "j1")
	dir := writeJob(t, tempDir(t), specAt("j1", 0), nil)
	require.NoError(t, os.Symlink(filepath.Join(out, jobstore.StatusFile), dir.StatusPath()))
	_, err := jobstore.ReadStatus(dir)
	require.ErrorIs(t, err, jobstore.ErrNotRegular)
	assert.Equal(t, dir.StatusPath(), errOf(t, err).Path)

	before := snapshotOf(t, out, true)
	require.NoError(t, jobstore.WriteStatus(dir, jobstore.JobStatus{State: jobstore.Failed}))
	assert.Equal(t, before, snapshotOf(t, out, true), "the link's target is untouched")
	fi, err := os.Lstat(dir.StatusPath())
	require.NoError(t, err)
	assert.True(t, fi.Mode().IsRegular(), "the link was replaced by the record")

	spec := writeJob(t, tempDir(t), specAt("j2", 0), nil)
	require.NoError(t, os.Remove(spec.SpecPath()))
	require.NoError(t, os.Symlink(filepath.Join(out, jobstore.SpecFile), spec.SpecPath()))
	_, err = jobstore.ReadSpec(spec)
	require.ErrorIs(t, err, jobstore.ErrNotRegular)
}

// TestConfinement_SubmitDirThatIsNotADirectoryIsNeverFollowed: the root's
// .submit, where Submit builds jobs, replaced by a link to a directory
// elsewhere, or by a file: Submit and WriteSpec of a new job fail with an
// error naming it, build nothing at the link's target, make no job, and
// the sweeps leave it alone.
func TestConfinement_SubmitDirThatIsNotADirectoryIsNeverFollowed(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func(t *testing.T, at string) (watch string)
	}{
		{"a link to a directory elsewhere", func(t *testing.T, at string) string {
			out := tempDir(t)
			require.NoError(t, os.Symlink(out, at))
			return out
		}},
		{"a regular file", func(t *testing.T, at string) string {
			require.NoError(t, os.WriteFile(at, []byte("not a directory"), 0o644))
			return ""
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := tempDir(t)
			at := filepath.Join(root, ".submit")
			watch := tc.make(t, at)
			var before map[string]fileState
			if watch != "" {
				before = snapshot(t, watch)
			}
			_, err := jobstore.Submit(root, jobstore.JobSpec{ID: "j1", Kind: "k"})
			e := errOf(t, err)
			assert.Equal(t, at, e.Path, "the error names .submit: %v", err)
			assert.NotEmpty(t, e.Remedy)
			err = jobstore.WriteSpec(jobstore.JobDir(filepath.Join(root, "j2")), jobstore.JobSpec{ID: "j2", Kind: "k"})
			assert.Equal(t, at, errOf(t, err).Path, "%v", err)
			_, err = jobstore.ReconcileAll(root)
			require.NoError(t, err)
			assert.Equal(t, []string{".submit"}, names(t, root), "no job is made, .submit stays as it was")
			if watch != "" {
				assert.Equal(t, before, snapshot(t, watch), "nothing is built at the link's target")
			}
		})
	}
}

// TestConfinement_RetryOfALinkedFailedJobWritesNothingThere: root/evil a
// link to a failed job elsewhere, which Retry would queue again if it
// reached it: every spelling of the path is refused with ErrNotRegular and
// the job at the link's target stays failed, byte for byte.
func TestConfinement_RetryOfALinkedFailedJobWritesNothingThere(t *testing.T) {
	sep := string(filepath.Separator)
	for _, spelling := range []string{"", sep, sep + sep, sep + "."} {
		t.Run(strconv.Quote("evil"+spelling), func(t *testing.T) {
			root := tempDir(t)
			target := writeJob(t, tempDir(t), specAt("evil", 0), statusIn(jobstore.Failed, 3))
			link := filepath.Join(root, "evil")
			require.NoError(t, os.Symlink(string(target), link))
			before := snapshotOf(t, string(target), true)

			err := jobstore.Retry(jobstore.JobDir(link + spelling))
			require.ErrorIs(t, err, jobstore.ErrNotRegular, "%v", err)
			assert.Equal(t, link, errOf(t, err).Path)
			assert.Equal(t, before, snapshotOf(t, string(target), true), "the job at the link's target was changed")
			assert.Equal(t, jobstore.Failed, readStatus(t, target).State)
		})
	}
}
