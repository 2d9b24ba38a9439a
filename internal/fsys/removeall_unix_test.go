//go:build unix

package fsys

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/axqua/jobstore/internal/prereq"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// Links inside the tree are removed as links: a link to a directory
// outside, a link to a file outside, a dangling one, and the tree's own
// subdirectory swapped for a link; every target survives with its content.
// A FIFO is removed without being opened (an open would block).
func TestRemoveAll_NeverFollowsALinkNorOpensAFIFO(t *testing.T) {
	base := t.TempDir()
	outside := filepath.Join(base, "outside")
	require.NoError(t, os.MkdirAll(filepath.Join(outside, "precious"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(outside, "precious", "data"), []byte("keep"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(outside, "file"), []byte("keep too"), 0o644))
	tree := filepath.Join(base, "tree")
	require.NoError(t, os.MkdirAll(filepath.Join(tree, "sub"), 0o755))
	require.NoError(t, os.Symlink(filepath.Join(outside, "precious"), filepath.Join(tree, "dirlink")))
	require.NoError(t, os.Symlink(filepath.Join(outside, "file"), filepath.Join(tree, "sub", "filelink")))
	require.NoError(t, os.Symlink(filepath.Join(base, "nowhere"), filepath.Join(tree, "dangling")))
	require.NoError(t, unix.Mkfifo(filepath.Join(tree, "sub", "fifo"), 0o644))

	d, err := Open(base, false)
	require.NoError(t, err)
	defer d.Close()
	require.NoError(t, d.RemoveAll("tree"))

	_, err = os.Lstat(tree)
	require.ErrorIs(t, err, os.ErrNotExist)
	b, err := os.ReadFile(filepath.Join(outside, "precious", "data"))
	require.NoError(t, err, "the target of a directory link inside the tree must survive")
	require.Equal(t, "keep", string(b))
	b, err = os.ReadFile(filepath.Join(outside, "file"))
	require.NoError(t, err, "the target of a file link inside the tree must survive")
	require.Equal(t, "keep too", string(b))
}

// RemoveAll of a name that is itself a link to a directory removes the
// link only.
func TestRemoveAll_ANameThatIsALinkIsRemovedAsALink(t *testing.T) {
	base := t.TempDir()
	target := filepath.Join(base, "target")
	require.NoError(t, os.MkdirAll(target, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(target, "data"), []byte("keep"), 0o644))
	require.NoError(t, os.Symlink(target, filepath.Join(base, "link")))
	d, err := Open(base, false)
	require.NoError(t, err)
	defer d.Close()
	require.NoError(t, d.RemoveAll("link"))
	_, err = os.Lstat(filepath.Join(base, "link"))
	require.ErrorIs(t, err, os.ErrNotExist)
	require.FileExists(t, filepath.Join(target, "data"))
}

// A filesystem mounted inside the tree is never entered: RemoveAll fails
// with ErrMountPoint naming it, and the mounted filesystem's files survive.
// Needs root (mount); CI runs as root.
func TestRemoveAll_NeverEntersAMountPoint(t *testing.T) {
	if os.Geteuid() != 0 {
		prereq.Skip(t, "root", "mounting a tmpfs needs root")
	}
	if _, err := exec.LookPath("mount"); err != nil {
		prereq.Skip(t, "mount", "mount is not installed")
	}
	base := t.TempDir()
	mnt := filepath.Join(base, "tree", "mnt")
	require.NoError(t, os.MkdirAll(mnt, 0o755))
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", mnt).CombinedOutput()
	require.NoError(t, err, "mount: %s", out)
	t.Cleanup(func() { _ = exec.Command("umount", "-l", mnt).Run() })
	require.NoError(t, os.WriteFile(filepath.Join(mnt, "other-fs"), []byte("keep"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(base, "tree", "file"), nil, 0o644))

	d, err := Open(base, false)
	require.NoError(t, err)
	defer d.Close()
	err = d.RemoveAll("tree")
	require.ErrorIs(t, err, ErrMountPoint)
	var pe *os.PathError
	require.True(t, errors.As(err, &pe) && pe.Path == mnt, "the error must name the mount point: %v", err)
	require.FileExists(t, filepath.Join(mnt, "other-fs"), "nothing on the mounted filesystem may be removed")
	require.NoFileExists(t, filepath.Join(base, "tree", "file"), "the rest of the tree is removed")
}
