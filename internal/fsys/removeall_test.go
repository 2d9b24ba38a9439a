package fsys

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/axqua/jobstore/internal/testdir"
)

// A tree of files and directories, read-only files included (Windows
// refuses to delete those unless the attribute is cleared), is removed
// whole; a name already gone is not an error.
func TestRemoveAll_RemovesATreeWithReadOnlyFiles(t *testing.T) {
	base := testdir.New(t)
	tree := filepath.Join(base, "tree")
	for _, dir := range []string{"a/b/c", "d", "e/.hidden"} {
		require.NoError(t, os.MkdirAll(filepath.Join(tree, dir), 0o755))
	}
	for _, f := range []string{"job.json", "a/x", "a/b/y", "a/b/c/z", "e/.hidden/w"} {
		require.NoError(t, os.WriteFile(filepath.Join(tree, f), []byte(f), 0o444))
	}
	d, err := Open(base, false)
	require.NoError(t, err)
	defer d.Close()

	require.NoError(t, d.RemoveAll("tree"))
	_, err = os.Lstat(tree)
	require.ErrorIs(t, err, os.ErrNotExist, "the tree must be gone")
	require.NoError(t, d.RemoveAll("tree"), "a name already gone is not an error")

	require.NoError(t, os.WriteFile(filepath.Join(base, "file"), nil, 0o444))
	require.NoError(t, d.RemoveAll("file"), "a read-only file alone")
	_, err = os.Lstat(filepath.Join(base, "file"))
	require.ErrorIs(t, err, os.ErrNotExist)
}
