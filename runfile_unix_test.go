//go:build unix

package jobstore_test

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestRunOpenFile_JobDirSwappedForALinkOpensInTheHeldDir: once the job has
// started, its directory is moved away and a link to a directory elsewhere
// put at its entry; OpenFile then opens (creates) the file in the
// directory the Run holds, and nothing appears at the link's target.
func TestRunOpenFile_JobDirSwappedForALinkOpensInTheHeldDir(t *testing.T) {
	dir, r := startJob(t)
	out := tempDir(t)
	moved := filepath.Join(filepath.Dir(string(dir)), "moved-away")
	require.NoError(t, os.Rename(string(dir), moved))
	require.NoError(t, os.Symlink(out, string(dir)))
	before := snapshotOf(t, out, true)

	f, err := r.OpenFile("stdout.log")
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	_, err = io.WriteString(f, "kept\n")
	require.NoError(t, err)

	assert.Equal(t, before, snapshotOf(t, out, true), "a file appeared at the link's target")
	got, err := os.ReadFile(filepath.Join(moved, "stdout.log"))
	require.NoError(t, err)
	assert.Equal(t, "kept\n", string(got))
}

// TestRunOpenFile_RefusesLinksFIFOsAndNames: a name that is a link (to a
// file elsewhere), a FIFO or a directory is ErrNotRegular, at once and
// with nothing created or changed at the link's target; a name that is no
// file of the runner's own is ErrInvalid, Subject "name"; after Close,
// ErrInvalid, Subject "run".
func TestRunOpenFile_RefusesLinksFIFOsAndNames(t *testing.T) {
	t.Run("not regular", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			make func(t *testing.T, path string)
		}{
			{"a link to a file elsewhere", func(t *testing.T, path string) {
				require.NoError(t, os.Symlink(filepath.Join(tempDir(t), "elsewhere"), path))
			}},
			{"a link to an existing file elsewhere", func(t *testing.T, path string) {
				target := filepath.Join(tempDir(t), "elsewhere")
				require.NoError(t, os.WriteFile(target, []byte("untouched"), 0o644))
				require.NoError(t, os.Symlink(target, path))
			}},
			{"a FIFO", func(t *testing.T, path string) { require.NoError(t, unix.Mkfifo(path, 0o644)) }},
			{"a directory", func(t *testing.T, path string) { require.NoError(t, os.Mkdir(path, 0o755)) }},
		} {
			t.Run(tc.name, func(t *testing.T) {
				dir, r := startJob(t)
				path := filepath.Join(string(dir), "stdout.log")
				tc.make(t, path)
				target, _ := os.Readlink(path)
				f, err := r.OpenFile("stdout.log")
				if err == nil {
					f.Close()
				}
				require.ErrorIs(t, err, jobstore.ErrNotRegular, "%v", err)
				assert.Equal(t, path, errOf(t, err).Path)
				if target != "" {
					b, err := os.ReadFile(target)
					if err == nil {
						assert.Equal(t, "untouched", string(b))
					} else {
						assert.ErrorIs(t, err, os.ErrNotExist, "the link's target was created")
					}
				}
			})
		}
	})
	t.Run("bad names", func(t *testing.T) {
		_, r := startJob(t)
		for _, name := range []string{"", ".", "..", ".status.json123", "a/b", "../escape", jobstore.SpecFile,
			jobstore.StatusFile, "STATUS.JSON", jobstore.LockFile, jobstore.CancelFile} {
			f, err := r.OpenFile(name)
			if err == nil {
				f.Close()
			}
			require.ErrorIs(t, err, jobstore.ErrInvalid, "%q: %v", name, err)
			assert.Equal(t, "name", errOf(t, err).Subject, "%q", name)
		}
	})
	t.Run("after Close", func(t *testing.T) {
		_, r := startJob(t)
		require.NoError(t, r.Close())
		_, err := r.OpenFile("stdout.log")
		require.ErrorIs(t, err, jobstore.ErrInvalid)
		assert.Equal(t, "run", errOf(t, err).Subject)
	})
}
