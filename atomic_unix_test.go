//go:build unix

package jobstore_test

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func inode(t testing.TB, path string) uint64 {
	t.Helper()
	fi, err := os.Stat(path)
	require.NoError(t, err)
	return fi.Sys().(*syscall.Stat_t).Ino
}

// withUmask sets the process umask for the rest of the test. The umask is
// process-wide: tests that use it must not run in parallel with writers.
func withUmask(t testing.TB, mask int) {
	t.Helper()
	old := syscall.Umask(mask)
	t.Cleanup(func() { syscall.Umask(old) })
}

// TestWriteJSONAtomic_PermissionsLikeOSWriteFile compares the mode of a
// new record with what os.WriteFile gives a new file, over umasks and
// WithPerm values: 0644 by default, and the umask applies. A replace gives
// the record the mode asked for, not the old file's.
func TestWriteJSONAtomic_PermissionsLikeOSWriteFile(t *testing.T) {
	for _, mask := range []int{0o022, 0o027, 0o077, 0o002, 0} {
		for _, perm := range []fs.FileMode{0, 0o644, 0o600, 0o640, 0o664, 0o444} {
			t.Run(fmt.Sprintf("umask %03o perm %03o", mask, perm), func(t *testing.T) {
				withUmask(t, mask)
				dir := tempDir(t)
				var opts []jobstore.WriteOption
				want := perm
				if perm == 0 {
					want = 0o644 // the default
				} else {
					opts = append(opts, jobstore.WithPerm(perm))
				}
				ref := filepath.Join(dir, "reference")
				require.NoError(t, os.WriteFile(ref, nil, want))
				refMode := mode(t, ref)

				path := filepath.Join(dir, "status.json")
				require.NoError(t, jobstore.WriteJSONAtomic(path, 1, opts...))
				assert.Equal(t, refMode, mode(t, path), "new file")

				require.NoError(t, os.Chmod(path, 0o600))
				require.NoError(t, jobstore.WriteJSONAtomic(path, 2, opts...))
				assert.Equal(t, refMode, mode(t, path), "replaced file")
			})
		}
	}
}

// TestWriteSpec_JobJSONIsReadOnly: job.json is written once, 0444 (less the
// umask), or WithPerm's read bits.
func TestWriteSpec_JobJSONIsReadOnly(t *testing.T) {
	for _, tt := range []struct {
		mask int
		perm fs.FileMode
		want fs.FileMode
	}{
		{0o022, 0, 0o444},
		{0o027, 0, 0o440},
		{0o022, 0o600, 0o400},
		{0o022, 0o666, 0o444},
		{0o077, 0o644, 0o400},
	} {
		t.Run(fmt.Sprintf("umask %03o perm %03o", tt.mask, tt.perm), func(t *testing.T) {
			withUmask(t, tt.mask)
			dir := newJobDir(t, "ro")
			var opts []jobstore.WriteOption
			if tt.perm != 0 {
				opts = append(opts, jobstore.WithPerm(tt.perm))
			}
			require.NoError(t, jobstore.WriteSpec(dir, jobstore.JobSpec{ID: "ro", Kind: "k"}, opts...))
			assert.Equal(t, tt.want, mode(t, dir.SpecPath()))
		})
	}
}

func mode(t testing.TB, path string) fs.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	require.NoError(t, err)
	return fi.Mode().Perm()
}

// TestWriteJSONAtomic_UnwrapsToTheOSError: the errors of the write protocol
// unwrap to the errno, as *fs.PathError does.
func TestWriteJSONAtomic_UnwrapsToTheOSError(t *testing.T) {
	dir := tempDir(t)
	err := jobstore.WriteJSONAtomic(filepath.Join(dir, "missing", "x.json"), 1)
	assert.ErrorIs(t, err, syscall.ENOENT)
	assert.ErrorIs(t, err, fs.ErrNotExist)

	sub := filepath.Join(dir, "sub")
	require.NoError(t, os.Mkdir(sub, 0o755))
	err = jobstore.WriteJSONAtomic(sub, 1)
	var errno syscall.Errno
	require.ErrorAs(t, err, &errno, "got %v", err)
	assert.Contains(t, []syscall.Errno{syscall.EISDIR, syscall.EEXIST, syscall.ENOTEMPTY}, errno)
}
