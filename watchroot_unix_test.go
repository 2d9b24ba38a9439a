//go:build unix

package jobstore_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestWatchRoot_HostileEntriesAreTheirDirsErr: a FIFO status.json, a FIFO
// job.json, a symbolic link standing for a job directory, a 17 MiB
// status.json and a damaged one are each their job's Err, without
// blocking: Synced comes, the link's target is never read, and a change of
// a healthy job is delivered while a damaged record is read again and
// again.
func TestWatchRoot_HostileEntriesAreTheirDirsErr(t *testing.T) {
	root := tempDir(t)
	fifoStatus := writeJob(t, root, specAt("fifostatus", 1), nil)
	require.NoError(t, unix.Mkfifo(fifoStatus.StatusPath(), 0o644))
	fifoSpec := jobstore.JobDir(filepath.Join(root, "fifospec"))
	require.NoError(t, os.Mkdir(string(fifoSpec), 0o755))
	require.NoError(t, unix.Mkfifo(fifoSpec.SpecPath(), 0o644))
	huge := writeJob(t, root, specAt("huge", 3), nil)
	require.NoError(t, os.WriteFile(huge.StatusPath(), nil, 0o644))
	require.NoError(t, os.Truncate(huge.StatusPath(), 17<<20))
	outside := writeJob(t, tempDir(t), specAt("linked", 4), statusIn(jobstore.Running, 42))
	link := jobstore.JobDir(filepath.Join(root, "linked"))
	require.NoError(t, os.Symlink(string(outside), string(link)))
	damaged := writeJob(t, root, specAt("damaged", 5), nil)
	writeFile(t, damaged.StatusPath(), []byte(`{"schema_version": 1, "sta`))
	healthy := writeJob(t, root, specAt("healthy", 6), statusIn(jobstore.Running, 1))

	f := followRoot(t, root, jobstore.WithPollInterval(slowPoll))
	f.untilSynced()
	for dir, kind := range map[jobstore.JobDir]error{
		fifoStatus: jobstore.ErrNotRegular, fifoSpec: jobstore.ErrNotRegular, huge: jobstore.ErrTooLarge,
		link: jobstore.ErrNotRegular, damaged: jobstore.ErrCorrupt,
	} {
		u := f.view[dir]
		assert.ErrorIs(t, u.Err, kind, "%s", dir)
		assert.Nil(t, u.Status, "%s", dir)
	}
	assert.Nil(t, f.view[link].Spec, "the link's target is never read")
	assert.NotNil(t, f.view[huge].Spec, "the other records of a job are still read")

	// A damaged record takes the reader's retries; the healthy job's change,
	// made after it, is delivered first.
	writeFile(t, damaged.StatusPath(), []byte(`{"schema_version": 1, "state"`))
	require.NoError(t, jobstore.WriteStatus(healthy, *statusIn(jobstore.Running, 2), jobstore.NoSync()))
	u := f.until("an update of the healthy or the damaged job", func(u jobstore.RootUpdate) bool {
		return u.Dir == healthy || u.Dir == damaged
	})
	assert.Equal(t, healthy, u.Dir, "the healthy job's update waited for the damaged record's retries")
}
