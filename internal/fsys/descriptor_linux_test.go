package fsys

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHeldPath_NamesTheDescriptorNotThePath: on Linux with procfs the held
// path resolves to the directory the descriptor holds after the directory
// was renamed and a link to elsewhere put at its path, and CreateTemp uses
// it: no os.Root is opened (the "open root" step never runs).
func TestHeldPath_NamesTheDescriptorNotThePath(t *testing.T) {
	parent, outside := t.TempDir(), t.TempDir()
	job := filepath.Join(parent, "job")
	require.NoError(t, os.Mkdir(job, 0o755))
	d, err := Open(job, true)
	require.NoError(t, err)
	defer d.Close()
	held, ok := d.heldPath()
	if !ok {
		t.Skip("/proc/self/fd is not procfs here (no /proc mounted): CreateTemp checks an os.Root instead, which the swap tests cover")
	}
	require.NoError(t, os.Rename(job, job+".moved"))
	require.NoError(t, os.Symlink(outside, job))

	want, err := os.Stat(job + ".moved")
	require.NoError(t, err)
	got, err := os.Stat(held)
	require.NoError(t, err)
	assert.True(t, os.SameFile(want, got), "%s resolves to %s, not to the directory held", held, got.Name())

	rootOpened := onTempSeam(t, "open root", func(string) {})
	f, tmp, err := d.CreateTemp("status.json", 0o644)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	assert.Zero(t, *rootOpened, "CreateTemp opened an os.Root although the held path was there")
	assert.Equal(t, []string{tmp}, namesIn(t, job+".moved"))
	assert.Empty(t, namesIn(t, outside))
}
