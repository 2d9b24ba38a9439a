//go:build linux

package faulttest_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/axqua/jobstore"
	ft "github.com/axqua/jobstore/internal/faulttest"
)

// Just after Remove renames a job directory to its hidden name, a network
// filesystem's client may not find it under that name (ENOENT), hold a
// stale handle of it (ESTALE), or take a name it lists in it for gone
// (ENOENT at the unlink, then the directory is not empty): GlusterFS
// clients did, for up to a second, while another client listed the root.
// Remove bears those for the stale-handle budget, and says the job is
// removed only once its directory is gone.

// hiddenName matches the directory Remove renames a job to.
func hiddenName(n string) bool { return strings.HasPrefix(n, ".remove-") }

// finishedJob is newJob, finished.
func finishedJob(t *testing.T, fsys *ft.FS) jobstore.JobDir {
	t.Helper()
	job := newJob(t, fsys)
	require.NoError(t, jobstore.WriteStatus(job, jobstore.JobStatus{State: jobstore.Succeeded, Seq: 2}))
	fsys.Clear()
	return job
}

// backingNames lists the jobs root below FUSE, but for the directory new
// jobs are built in and the live index (which must hold no entry for a job
// that is not in the root).
func backingNames(t *testing.T, fsys *ft.FS) []string {
	t.Helper()
	ents, err := os.ReadDir(fsys.Backing)
	require.NoError(t, err)
	var names []string
	for _, e := range ents {
		if e.Name() != ".submit" && e.Name() != jobstore.LiveDir {
			names = append(names, e.Name())
		}
	}
	live, err := os.ReadDir(filepath.Join(fsys.Backing, jobstore.LiveDir))
	if err == nil {
		for _, e := range live {
			_, err := os.Lstat(filepath.Join(fsys.Backing, e.Name()))
			assert.NoError(t, err, "the live index names %s, which is not in the root", e.Name())
		}
	}
	return names
}

func TestRemove_HiddenDirectoryALaggingClientCannotReachYetIsRemovedWhole(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault ft.Fault
	}{
		{"its open is ESTALE", ft.Fault{Op: ft.Opendir, Match: hiddenName, Errno: syscall.ESTALE, Times: 5}},
		{"its open is ENOENT", ft.Fault{Op: ft.Opendir, Match: hiddenName, Errno: syscall.ENOENT, Times: 5}},
		{"job.json's unlink is ENOENT", ft.Fault{Op: ft.Unlink, Match: ft.Named(jobstore.SpecFile), Errno: syscall.ENOENT, Times: 5}},
		{"its rmdir is ENOENT", ft.Fault{Op: ft.Rmdir, Match: hiddenName, Errno: syscall.ENOENT, Times: 5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := mountFaulty(t)
			job := finishedJob(t, fsys)
			fsys.Inject(tc.fault)

			require.NoError(t, jobstore.Remove(job))

			assert.Empty(t, backingNames(t, fsys), "the job, and its hidden directory, are gone")
			calls := fsys.Calls(tc.fault.Op, tc.fault.Match)
			require.Greater(t, len(calls), tc.fault.Times, "every fault was met, then the call went through")
			assert.Equal(t, syscall.Errno(0), calls[len(calls)-1].Errno)
		})
	}
}

func TestRemove_HiddenDirectoryStaleBeyondTheBudgetIsAnIOError(t *testing.T) {
	fsys := mountFaulty(t)
	job := finishedJob(t, fsys)
	fsys.Inject(ft.Fault{Op: ft.Opendir, Match: hiddenName, Errno: syscall.ESTALE}) // every open

	start := time.Now()
	err := jobstore.Remove(job)
	took := time.Since(start)

	require.Error(t, err)
	assert.ErrorIs(t, err, syscall.ESTALE)
	assert.Equal(t, jobstore.CodeIO, jobstore.ErrorCode(err))
	var e *jobstore.Error
	require.ErrorAs(t, err, &e)
	assert.True(t, hiddenName(e.Path[strings.LastIndexByte(e.Path, '/')+1:]), "the error names the hidden directory: %s", e.Path)
	assert.NotEmpty(t, e.Remedy)
	assert.GreaterOrEqual(t, took, staleRetryFor, "gave up before the stale-handle budget was spent")
	names := backingNames(t, fsys)
	require.Len(t, names, 1, "the job left the root; its hidden directory stays for Prune")
	assert.True(t, hiddenName(names[0]), names[0])
}
