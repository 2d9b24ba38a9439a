//go:build unix

package jobstore_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/axqua/jobstore"
)

// A job directory that is a symbolic link (to a finished job elsewhere) is
// ErrNotRegular: neither the link nor the directory it points to is
// touched.
func TestRemove_RefusesAJobDirectoryThatIsALink(t *testing.T) {
	root, elsewhere := tempDir(t), tempDir(t)
	target := finishedBy(t, elsewhere, "target", jobstore.Succeeded)
	link := filepath.Join(root, "j")
	require.NoError(t, os.Symlink(string(target), link))
	before, targetBefore := snapshot(t, root), snapshot(t, string(target))

	err := jobstore.Remove(jobstore.JobDir(link))
	require.ErrorIs(t, err, jobstore.ErrNotRegular)
	require.Equal(t, before, snapshot(t, root))
	require.Equal(t, targetBefore, snapshot(t, string(target)), "the link's target must be untouched")
}

// What a job directory holds besides its records is removed as names: a
// link to a directory outside the root and a link to a file outside it
// (their targets survive, contents and all), a FIFO (never opened, so
// nothing blocks), a subdirectory with files.
func TestRemove_RemovesLinksAsLinksAndNeverOpensAFIFO(t *testing.T) {
	root, outside := tempDir(t), tempDir(t)
	require.NoError(t, os.MkdirAll(filepath.Join(outside, "precious"), 0o755))
	writeFile(t, filepath.Join(outside, "precious", "data"), []byte("keep"))
	writeFile(t, filepath.Join(outside, "file"), []byte("keep too"))
	outsideBefore := snapshot(t, outside)

	dir := finishedBy(t, root, "j", jobstore.Succeeded)
	require.NoError(t, os.Symlink(filepath.Join(outside, "precious"), filepath.Join(string(dir), "output")))
	require.NoError(t, os.Symlink(filepath.Join(outside, "file"), filepath.Join(string(dir), "log")))
	require.NoError(t, unix.Mkfifo(filepath.Join(string(dir), "pipe"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(string(dir), "work", "deep"), 0o755))
	writeFile(t, filepath.Join(string(dir), "work", "deep", "result"), []byte("x"))
	require.NoError(t, os.Symlink(filepath.Join(outside, "precious"), filepath.Join(string(dir), "work", "deep", "up")))

	require.NoError(t, jobstore.Remove(dir))
	requireRemoved(t, dir)
	require.Equal(t, outsideBefore, snapshot(t, outside), "nothing outside the root may be touched through a link")
}
