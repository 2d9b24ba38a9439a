package dirstamp_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/axqua/jobstore/internal/dirstamp"
	"github.com/axqua/jobstore/internal/testdir"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestClose_ReleasesTheDescriptorListedOrNot: a Dir holds one descriptor
// from Open to Close, whether it was only stamped or also listed (then an
// *os.File owns it), and a listing after stats lists from the start each
// time.
func TestClose_ReleasesTheDescriptorListedOrNot(t *testing.T) {
	root := testdir.New(t)
	for _, name := range []string{"a", "b"} {
		require.NoError(t, os.Mkdir(filepath.Join(root, name), 0o755))
	}
	open := func() int {
		fds, err := os.ReadDir("/proc/self/fd")
		require.NoError(t, err)
		return len(fds)
	}
	tests := []struct {
		name string
		use  func(t *testing.T, d *dirstamp.Dir)
	}{
		{"stamped", func(t *testing.T, d *dirstamp.Dir) {
			_, err := d.Stamp()
			require.NoError(t, err)
			_, err = d.Lstat("a")
			require.NoError(t, err)
		}},
		{"listed twice", func(t *testing.T, d *dirstamp.Dir) {
			for range 2 {
				names, err := d.Names()
				require.NoError(t, err)
				assert.ElementsMatch(t, []string{"a", "b"}, names)
				_, err = d.Lstat("b") // a stat through the listed descriptor
				require.NoError(t, err)
			}
			inodes, err := d.Inodes()
			require.NoError(t, err)
			assert.Len(t, inodes, 2)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := open()
			d, err := dirstamp.Open(root)
			require.NoError(t, err)
			assert.Equal(t, before+1, open(), "one descriptor while open")
			tt.use(t, d)
			require.NoError(t, d.Close())
			assert.Equal(t, before, open(), "none left after Close")
		})
	}
}
