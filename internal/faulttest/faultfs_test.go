//go:build linux

package faulttest_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/axqua/jobstore"
	ft "github.com/axqua/jobstore/internal/faulttest"
)

// These tests run jobstore's writers on a FUSE loopback whose fault layer
// fails one step of the write protocol, and check what the caller and the
// disk see: the OS error comes back (errors.Is) with the failed step in
// Error.Op; the previous record is byte-identical; no temp file is left;
// a failed fsync is never retried (fsyncgate: after one, Linux may report
// the next as a success with the data gone). What the disk holds is read
// from the backing directory, below FUSE and its caches.

const jobID = "job-1"

// tempOf matches jobstore's temp files for target ("." + target + digits).
func tempOf(target string) ft.Match {
	return func(n string) bool { return jobstore.IsTempName(n) && strings.HasPrefix(n, "."+target) }
}

func TestWriteStatus_FailedStepKeepsOldRecordAndLeavesNoTemp(t *testing.T) {
	tests := []struct {
		name       string
		fault      ft.Fault
		wantErrno  syscall.Errno
		wantOp     string // the *jobstore.Error Op that names the failed step
		wantFsyncs int    // fsyncs of the temp file: a failed one is never retried
	}{
		{
			name: "fsync of the temp file fails",
			// Times 1: like Linux after a failed fsync, a retry would "succeed".
			fault:     ft.Fault{Op: ft.Fsync, Match: tempOf(jobstore.StatusFile), Errno: syscall.EIO, Times: 1},
			wantErrno: syscall.EIO, wantOp: "fsync", wantFsyncs: 1,
		},
		{
			name:      "rename fails",
			fault:     ft.Fault{Op: ft.Rename, Match: ft.Named(jobstore.StatusFile), Errno: syscall.EIO},
			wantErrno: syscall.EIO, wantOp: "rename", wantFsyncs: 1,
		},
		{
			name:      "write fails, disk full",
			fault:     ft.Fault{Op: ft.Write, Match: tempOf(jobstore.StatusFile), Errno: syscall.ENOSPC},
			wantErrno: syscall.ENOSPC, wantOp: "write", wantFsyncs: 0,
		},
		{
			name:      "close fails",
			fault:     ft.Fault{Op: ft.Flush, Match: tempOf(jobstore.StatusFile), Errno: syscall.EIO},
			wantErrno: syscall.EIO, wantOp: "close", wantFsyncs: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := mountFaulty(t)
			job := newJob(t, fsys)
			oldStatus := backingBytes(t, fsys, jobstore.StatusFile)
			fsys.Inject(tt.fault)

			err := jobstore.WriteStatus(job, jobstore.JobStatus{State: jobstore.Succeeded, Seq: 2})

			assert.Len(t, fsys.Calls(ft.Fsync, tempOf(jobstore.StatusFile)), tt.wantFsyncs,
				"fsync of the temp file must be called exactly this often: a failed fsync is never retried")
			assert.Error(t, err, "the fault layer failed a step; WriteStatus must say so")
			assert.ErrorIs(t, err, tt.wantErrno)
			var je *jobstore.Error
			if assert.ErrorAs(t, err, &je) {
				assert.Equal(t, tt.wantOp, je.Op, "Op should name the failed step: %v", err)
			}
			if tt.wantOp == "fsync" {
				assert.Empty(t, fsys.Calls(ft.Rename, ft.Named(jobstore.StatusFile)),
					"an unconfirmed temp file must not be renamed over the record")
			}
			assert.Equal(t, string(oldStatus), string(backingBytes(t, fsys, jobstore.StatusFile)), "status.json changed")
			assert.Empty(t, backingTemps(t, fsys), "temp file left behind")

			fsys.Clear()
			require.NoError(t, jobstore.WriteStatus(job, jobstore.JobStatus{State: jobstore.Succeeded, Seq: 3}),
				"without the fault the same write must succeed")
			st, _, err := jobstore.DecodeStatus(backingBytes(t, fsys, jobstore.StatusFile))
			require.NoError(t, err)
			assert.Equal(t, uint64(3), st.Seq)
		})
	}
}

// The core rule for a directory fsync: EIO is an error (the new record is in
// place but may not survive a power cut, and the caller must hear it);
// EINVAL or EOPNOTSUPP means the filesystem cannot fsync a directory, which
// is not an error.
func TestWriteStatus_DirectoryFsyncErrorsByKind(t *testing.T) {
	tests := []struct {
		errno   syscall.Errno
		wantErr bool
	}{
		{syscall.EIO, true},
		{syscall.EINVAL, false},
		{syscall.EOPNOTSUPP, false},
	}
	for _, tt := range tests {
		t.Run(tt.errno.Error(), func(t *testing.T) {
			fsys := mountFaulty(t)
			job := newJob(t, fsys)
			fsys.Inject(ft.Fault{Op: ft.FsyncDir, Match: ft.Named(jobID), Errno: tt.errno})

			err := jobstore.WriteStatus(job, jobstore.JobStatus{State: jobstore.Succeeded, Seq: 2})

			if tt.wantErr {
				require.Error(t, err, "a directory fsync EIO must reach the caller")
				assert.ErrorIs(t, err, tt.errno)
				var je *jobstore.Error
				if assert.ErrorAs(t, err, &je) {
					assert.Equal(t, "fsync directory", je.Op)
				}
				assert.Contains(t, err.Error(), "status.json is in place")
				assert.Contains(t, err.Error(), "may not survive a power cut")
			} else {
				assert.NoError(t, err, "a filesystem that cannot fsync a directory is not an error")
			}
			assert.Len(t, fsys.Calls(ft.FsyncDir, ft.Named(jobID)), 1, "directory fsyncs of the job dir")
			// Either way the rename happened: the new record is in place.
			st, _, derr := jobstore.DecodeStatus(backingBytes(t, fsys, jobstore.StatusFile))
			require.NoError(t, derr)
			assert.Equal(t, uint64(2), st.Seq)
			assert.Empty(t, backingTemps(t, fsys), "temp file left behind")
		})
	}
}

func TestWriteSpec_FailedStepPublishesNothing(t *testing.T) {
	const newID = "job-2"
	tests := []struct {
		name       string
		fault      ft.Fault
		wantErrno  syscall.Errno
		wantOp     string
		wantFsyncs int
		// published: the step failed after the job was renamed into place
		// (the root's fsync comes last): job.json is there, whole, and the
		// same submission again is ErrExists.
		published bool
	}{
		{
			name:      "fsync of the temp file fails",
			fault:     ft.Fault{Op: ft.Fsync, Match: tempOf(jobstore.SpecFile), Errno: syscall.EIO, Times: 1},
			wantErrno: syscall.EIO, wantOp: "fsync", wantFsyncs: 1,
		},
		{
			name:      "write fails, disk full",
			fault:     ft.Fault{Op: ft.Write, Match: tempOf(jobstore.SpecFile), Errno: syscall.ENOSPC},
			wantErrno: syscall.ENOSPC, wantOp: "write", wantFsyncs: 0,
		},
		{
			name:      "publishing rename fails",
			fault:     ft.Fault{Op: ft.Rename, Match: ft.Named(jobstore.SpecFile), Errno: syscall.EIO},
			wantErrno: syscall.EIO, wantOp: "publish", wantFsyncs: 1,
		},
		{
			name: "the new job directory is not confirmed on disk",
			// The mount's root is the parent of the job dir: the job is built
			// in a hidden directory there, renamed into place, and the root
			// fsynced last.
			fault:     ft.Fault{Op: ft.FsyncDir, Match: ft.Named(""), Errno: syscall.EIO},
			wantErrno: syscall.EIO, wantOp: "fsync directory", wantFsyncs: 1, published: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := mountFaulty(t)
			job := jobstore.JobDir(filepath.Join(fsys.Mountpoint, newID))
			fsys.Inject(tt.fault)

			err := jobstore.WriteSpec(job, jobstore.JobSpec{ID: newID, Kind: "render"})

			assert.Len(t, fsys.Calls(ft.Fsync, tempOf(jobstore.SpecFile)), tt.wantFsyncs,
				"fsync of the temp file must be called exactly this often: a failed fsync is never retried")
			assert.Error(t, err, "the fault layer failed a step; WriteSpec must say so")
			assert.ErrorIs(t, err, tt.wantErrno)
			assert.NotErrorIs(t, err, jobstore.ErrExists)
			var je *jobstore.Error
			if assert.ErrorAs(t, err, &je) {
				assert.Equal(t, tt.wantOp, je.Op, "Op should name the failed step: %v", err)
			}
			_, serr := os.Lstat(filepath.Join(fsys.Backing, newID, jobstore.SpecFile))
			assert.Empty(t, backingTemps(t, fsys), "temp file left behind")
			fsys.Clear()
			if tt.published {
				require.NoError(t, serr, "the job was in place before the failed step")
				assert.Contains(t, err.Error(), "in place and visible")
				require.ErrorIs(t, jobstore.WriteSpec(job, jobstore.JobSpec{ID: newID, Kind: "render"}), jobstore.ErrExists,
					"the job exists: the same submission again is refused")
			} else {
				assert.ErrorIs(t, serr, fs.ErrNotExist, "job.json must not be published after a failed step")
				require.NoError(t, jobstore.WriteSpec(job, jobstore.JobSpec{ID: newID, Kind: "render"}),
					"without the fault the same submission must succeed")
			}
			spec, _, err := jobstore.DecodeSpec(backingBytesIn(t, fsys, newID, jobstore.SpecFile))
			require.NoError(t, err)
			assert.Equal(t, newID, spec.ID)
		})
	}
}

// mountFaulty mounts a fresh faulty loopback, unmounted at cleanup. It skips
// where FUSE cannot be mounted.
func mountFaulty(t *testing.T) *ft.FS {
	t.Helper()
	if missing := missingPrerequisites(); len(missing) > 0 {
		t.Skip(strings.Join(missing, "; ")) // only with allowSkipEnv=1: see TestMain
	}
	backing, mnt := tempDir(t), tempDir(t) // removed after the unmount below
	fsys, err := ft.Mount(backing, mnt)
	require.NoError(t, err)
	t.Cleanup(func() {
		if err := fsys.Unmount(); err != nil {
			t.Errorf("unmount %s: %v", mnt, err)
		}
	})
	return fsys
}

// newJob writes job.json and a first status.json through the mount, then
// forgets the calls that made them.
func newJob(t *testing.T, fsys *ft.FS) jobstore.JobDir {
	t.Helper()
	job := jobstore.JobDir(filepath.Join(fsys.Mountpoint, jobID))
	require.NoError(t, jobstore.WriteSpec(job, jobstore.JobSpec{ID: jobID, Kind: "render"}))
	require.NoError(t, jobstore.WriteStatus(job, jobstore.JobStatus{State: jobstore.Running, Seq: 1}))
	fsys.Clear()
	return job
}

// backingBytes reads a file of job-1 below FUSE.
func backingBytes(t *testing.T, fsys *ft.FS, name string) []byte {
	t.Helper()
	return backingBytesIn(t, fsys, jobID, name)
}

func backingBytesIn(t *testing.T, fsys *ft.FS, id, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fsys.Backing, id, name))
	require.NoError(t, err)
	return b
}

// backingTemps lists jobstore temp files anywhere in the backing directory.
func backingTemps(t *testing.T, fsys *ft.FS) []string {
	t.Helper()
	var temps []string
	err := filepath.WalkDir(fsys.Backing, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if jobstore.IsTempName(d.Name()) {
			temps = append(temps, path)
		}
		return nil
	})
	require.NoError(t, err)
	return temps
}

// tempDir is t.TempDir: this module runs on Linux only, so the root
// package's Wine workaround is not needed here.
func tempDir(t *testing.T) string {
	t.Helper()
	return t.TempDir()
}

// TestWriteSpec_FallsBackToLinkWithoutNoReplaceRename: a filesystem without
// renameat2(RENAME_NOREPLACE) answers EINVAL; WriteSpec must then publish
// job.json with link(2), which is just as exclusive, and leave no temp file.
// This is also the path every non-Linux Unix takes.
func TestWriteSpec_FallsBackToLinkWithoutNoReplaceRename(t *testing.T) {
	const id = "job-link"
	fsys := mountFaulty(t)
	job := jobstore.JobDir(filepath.Join(fsys.Mountpoint, id))
	fsys.Inject(ft.Fault{Op: ft.Rename, Match: ft.Named(jobstore.SpecFile), Errno: syscall.EINVAL})

	require.NoError(t, jobstore.WriteSpec(job, jobstore.JobSpec{ID: id, Kind: "first"}))
	renames := fsys.Calls(ft.Rename, ft.Named(jobstore.SpecFile))
	require.Len(t, renames, 1, "WriteSpec should try the no-replace rename once")
	assert.Equal(t, syscall.EINVAL, renames[0].Errno)
	spec, _, err := jobstore.DecodeSpec(backingBytesIn(t, fsys, id, jobstore.SpecFile))
	require.NoError(t, err)
	assert.Equal(t, "first", spec.Kind)
	assert.Empty(t, backingTemps(t, fsys), "the temp name must be removed after the link")

	err = jobstore.WriteSpec(job, jobstore.JobSpec{ID: id, Kind: "second"})
	assert.ErrorIs(t, err, jobstore.ErrExists, "link(2) must refuse a taken name")
	assert.ErrorIs(t, err, fs.ErrExist)
	spec, _, err = jobstore.DecodeSpec(backingBytesIn(t, fsys, id, jobstore.SpecFile))
	require.NoError(t, err)
	assert.Equal(t, "first", spec.Kind, "the loser must not change job.json")
	assert.Empty(t, backingTemps(t, fsys), "the loser's temp file must be removed")
}
