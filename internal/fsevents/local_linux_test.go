package fsevents

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/axqua/jobstore/internal/prereq"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLocal_KnownTypesOnly: a tmpfs is local (as root, which can mount
// one); /proc, a type not on the list, is not; a path that does not exist
// never is.
func TestLocal_KnownTypesOnly(t *testing.T) {
	assert.False(t, Local(filepath.Join(newDir(t), "missing")))
	assert.False(t, Local("/proc"))
	if os.Geteuid() != 0 {
		prereq.Skip(t, "root", "mounting a tmpfs needs root")
	}
	dir := newDir(t)
	require.NoError(t, syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=64k"))
	t.Cleanup(func() { _ = syscall.Unmount(dir, 0) })
	assert.True(t, Local(dir))
}
