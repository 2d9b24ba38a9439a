//go:build unix

package jobstore

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/axqua/jobstore/internal/testdir"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLockOpenError_AJobRemovedMeanwhileIsNotJob injects what an open of
// job.lock answers on a network filesystem whose attribute cache still
// shows a job directory that Remove is taking away (EACCES, ENOENT,
// ESTALE): once the directory is gone or going, the answer is ErrNotJob,
// "removed meanwhile", as a Start racing a Remove gets on a local disk;
// while the job is in place, a refused open names the missing permission
// and any other failure is an I/O error.
func TestLockOpenError_AJobRemovedMeanwhileIsNotJob(t *testing.T) {
	going := func(t *testing.T, dir JobDir) {
		// Remove's first step: the job leaves the root under a hidden name.
		require.NoError(t, os.Rename(string(dir), filepath.Join(filepath.Dir(string(dir)), removePrefix+dir.ID()+"-1")))
	}
	for _, tc := range []struct {
		name      string
		remove    func(t *testing.T, dir JobDir) // nil: the job stays
		cause     error
		notJob    bool
		remedyHas string
	}{
		{"in place, permission refused", nil, syscall.EACCES, false, "write permission on the job directory"},
		{"in place, not permitted", nil, syscall.EPERM, false, "write permission on the job directory"},
		{"in place, other failure", nil, syscall.EIO, false, "check the job directory"},
		{"in place, stale handle", nil, syscall.ESTALE, true, ""},
		{"going, permission refused", going, syscall.EACCES, true, ""},
		{"going, no such file", going, syscall.ENOENT, true, ""},
		{"going, job.json deleted", func(t *testing.T, dir JobDir) {
			going(t, dir)
			path := filepath.Join(filepath.Dir(string(dir)), removePrefix+dir.ID()+"-1", SpecFile)
			require.NoError(t, os.Remove(path))
		}, syscall.EACCES, true, ""},
		{"gone, permission refused", func(t *testing.T, dir JobDir) {
			require.NoError(t, Remove(dir))
		}, syscall.EACCES, true, ""},
		{"gone, stale handle", func(t *testing.T, dir JobDir) {
			require.NoError(t, Remove(dir))
		}, syscall.ESTALE, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := testdir.New(t)
			dir, err := Submit(root, JobSpec{ID: "j", Kind: "k"})
			require.NoError(t, err)
			if tc.remove != nil {
				require.NoError(t, WriteStatus(dir, JobStatus{State: Cancelled, Seq: 2}))
			}
			jd, err := openJobDir("start", dir)
			require.NoError(t, err)
			t.Cleanup(func() { jd.Close() })
			if tc.remove != nil {
				tc.remove(t, dir)
			}

			err = lockOpenError("start", jd, tc.cause)
			require.Error(t, err)
			assert.Equal(t, tc.notJob, errors.Is(err, ErrNotJob), "%v", err)
			var e *Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, string(dir), e.Path[:len(dir)], "names the job")
			if tc.notJob {
				assert.Equal(t, CodeNotJob, ErrorCode(err))
				assert.Contains(t, err.Error(), "removed meanwhile")
				assert.NotContains(t, e.Remedy, "permission")
				return
			}
			assert.ErrorIs(t, err, tc.cause)
			assert.Contains(t, e.Remedy, tc.remedyHas)
		})
	}
}
