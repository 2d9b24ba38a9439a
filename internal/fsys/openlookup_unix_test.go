//go:build unix

package fsys

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestOpenLookup_RefusesWhatOpenRefusesAndReadsWhatOpenReads: a link at
// the path (to a directory or a file), a FIFO and a file are refused as
// Open with nofollow refuses them (*NotRegularError naming the type), a
// missing one is fs.ErrNotExist, and through a directory opened so, a
// record is read, a name is looked up and the names are listed.
func TestOpenLookup_RefusesWhatOpenRefusesAndReadsWhatOpenReads(t *testing.T) {
	parent := t.TempDir()
	job := filepath.Join(parent, "job")
	require.NoError(t, os.Mkdir(job, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(job, "status.json"), []byte("{}\n"), 0o644))
	require.NoError(t, os.Symlink(job, filepath.Join(parent, "link-to-dir")))
	require.NoError(t, os.Symlink(filepath.Join(job, "status.json"), filepath.Join(parent, "link-to-file")))
	require.NoError(t, unix.Mkfifo(filepath.Join(parent, "fifo"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(parent, "file"), nil, 0o644))

	for name, want := range map[string]fs.FileMode{
		"link-to-dir": fs.ModeSymlink, "link-to-file": fs.ModeSymlink, "fifo": fs.ModeNamedPipe, "file": 0,
	} {
		t.Run(name, func(t *testing.T) {
			_, openErr := Open(filepath.Join(parent, name), true)
			_, err := OpenLookup(filepath.Join(parent, name))
			var nr, openNR *NotRegularError
			require.ErrorAs(t, err, &nr)
			require.ErrorAs(t, openErr, &openNR)
			assert.Equal(t, want, nr.Mode.Type())
			assert.Equal(t, openNR.Mode.Type(), nr.Mode.Type())
		})
	}
	t.Run("missing", func(t *testing.T) {
		_, err := OpenLookup(filepath.Join(parent, "missing"))
		assert.ErrorIs(t, err, fs.ErrNotExist)
	})
	t.Run("a directory", func(t *testing.T) {
		d, err := OpenLookup(job)
		require.NoError(t, err)
		defer d.Close()
		f, err := d.OpenRecord("status.json")
		require.NoError(t, err)
		data, err := ReadAll(f, 1<<20, func(int64) error { return fs.ErrInvalid })
		require.NoError(t, f.Close())
		require.NoError(t, err)
		assert.Equal(t, "{}\n", string(data))
		fi, err := d.Lstat("status.json")
		require.NoError(t, err)
		assert.True(t, fi.Mode().IsRegular())
		names, err := d.Names()
		require.NoError(t, err)
		assert.Equal(t, []string{"status.json"}, names)
	})
}

// TestOpenRegular_FileIsBlockingWithItsAccessMode: a file opened in place
// (OpenLock, OpenWriter, OpenReadWrite: opened with O_NONBLOCK, so that a
// FIFO there cannot block the open) comes back without O_NONBLOCK and with
// the access mode asked for, and a FIFO is refused.
func TestOpenRegular_FileIsBlockingWithItsAccessMode(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, unix.Mkfifo(filepath.Join(dir, "fifo"), 0o644))
	d, err := Open(dir, true)
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	tests := []struct {
		name string
		open func(string) (*os.File, error)
		mode int
	}{
		{"OpenLock", d.OpenLock, unix.O_RDWR},
		{"OpenWriter", func(n string) (*os.File, error) { return d.OpenWriter(n, 0o644) }, unix.O_WRONLY},
		{"OpenReadWrite", func(n string) (*os.File, error) { return d.OpenReadWrite(n, 0o644) }, unix.O_RDWR},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := tt.open(tt.name)
			require.NoError(t, err)
			t.Cleanup(func() { f.Close() })
			flags, err := unix.FcntlInt(f.Fd(), unix.F_GETFL, 0)
			require.NoError(t, err)
			assert.Zero(t, flags&unix.O_NONBLOCK, "O_NONBLOCK is cleared")
			assert.Equal(t, tt.mode, flags&unix.O_ACCMODE, "the access mode is kept")
			_, err = tt.open("fifo")
			var nr *NotRegularError
			assert.ErrorAs(t, err, &nr, "a FIFO is refused")
		})
	}
}
