//go:build unix

package jobstore_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadJSONTolerant_PermissionDeniedIsNotRetriedAndSaysWhatToDo(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("running as root, which reads any file: permission denied cannot be produced")
	}
	path := filepath.Join(tempDir(t), "status.json")
	writeFile(t, path, []byte(`{}`))
	require.NoError(t, os.Chmod(path, 0))
	var v any
	found, err := jobstore.ReadJSONTolerant(path, &v)
	assert.True(t, found)
	assert.ErrorIs(t, err, fs.ErrPermission)
	assert.NotErrorIs(t, err, jobstore.ErrCorrupt)
	assert.Contains(t, errOf(t, err).Remedy, "read permission")
}
