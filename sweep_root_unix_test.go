//go:build unix

package jobstore_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A jobs root reached through a symbolic link, and links in a root. Unix
// only: Wine's symbolic links are not Windows', and Windows' need a
// privilege.

// symlinkedRoot returns a jobs root reached through a symbolic link (the
// link's path), and the real directory.
func symlinkedRoot(t *testing.T) (link, real string) {
	t.Helper()
	tmp := tempDir(t)
	real = filepath.Join(tmp, "real-jobs")
	require.NoError(t, os.Mkdir(real, 0o755))
	link = filepath.Join(tmp, "jobs")
	require.NoError(t, os.Symlink(real, link))
	return link, real
}

// TestRebuildIndex_SweepsARootReachedThroughASymlink: the root may be
// reached through a link (the caller's choice); the sweep of its own
// leftovers opens it as a directory, not as a job directory.
func TestRebuildIndex_SweepsARootReachedThroughASymlink(t *testing.T) {
	root, real := symlinkedRoot(t)
	_, err := jobstore.Submit(root, jobstore.JobSpec{ID: "a-job", Kind: "test"})
	require.NoError(t, err)
	oldTemp := tempFile(t, real, ".index.json55", 2*jobstore.DefaultSweepAge)
	freshTemp := tempFile(t, real, ".index.json56", 0)
	oldBuild := buildDir(t, real, ".submit/b-1", 2*jobstore.DefaultSweepAge, jobstore.SpecFile, jobstore.StatusFile)

	idx, err := jobstore.RebuildIndex(root)
	require.NoError(t, err)
	require.Len(t, idx.Jobs, 1)
	assert.NoFileExists(t, oldTemp, "a crashed rebuild's temp file is swept")
	assert.FileExists(t, freshTemp, "a live rebuild's temp file is left alone")
	assert.NoDirExists(t, oldBuild, "an interrupted Submit's build directory is swept")
	assert.Equal(t, []string{".index.json56", "a-job", jobstore.IndexFile}, names(t, real))
}

func TestReconcileAll_RemovesWhatInterruptedSubmitsLeftUnderASymlinkedRoot(t *testing.T) {
	root, real := symlinkedRoot(t)
	requireLeftoversRemoved(t, root, real)
}

// TestSubmit_ANameTakenByASymlinkToAnEmptyDirectoryIsRefused: a link at
// the job's name is ErrNotRegular (as in
// TestConfinement_JobDirThatIsASymlinkIsNeverFollowed) even where it leads
// to an empty directory, which Submit would replace: the link is neither
// followed nor replaced.
func TestSubmit_ANameTakenByASymlinkToAnEmptyDirectoryIsRefused(t *testing.T) {
	root := tempDir(t)
	target := tempDir(t)
	require.NoError(t, os.Symlink(target, filepath.Join(root, "a-link")))
	before := snapshot(t, root)
	_, err := jobstore.Submit(root, jobstore.JobSpec{ID: "a-link", Kind: "test"})
	require.ErrorIs(t, err, jobstore.ErrNotRegular)
	assert.Contains(t, err.Error(), "symbolic link")
	assert.Equal(t, before, snapshot(t, root))
	assert.Empty(t, names(t, target), "nothing was written through the link")
}
