//go:build unix

package fsys

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

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
