package jobstore_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/internal/prereq"
)

// A full disk is the failure the write protocol must survive most often in
// the field. These tests fill a real (tiny) tmpfs, by bytes and by inodes,
// and check that every write fails with ENOSPC, names the step that failed,
// leaves the previous records byte-identical and leaves no temp file; and
// that writes work again once space is freed.

// fillChunk is how much the filler writes at a time: one tmpfs page.
const fillChunk = 4096

func TestDiskFull_WritesFailWithENOSPCAndLeaveRecordsIntact(t *testing.T) {
	tests := []struct {
		name  string
		opts  string // tmpfs mount options
		fill  func(t *testing.T, mnt string) (free func())
		steps map[string]string // write -> the *Error Op of the step that must fail
	}{
		{
			name: "no space left",
			opts: "size=64k,nr_inodes=16",
			fill: fillSpace,
			// Creating a file costs an inode, not a block: the temp file
			// and the new job dir are created, the bytes cannot be written.
			steps: map[string]string{
				"WriteStatus":              "write",
				"WriteSpec over a job":     "write",
				"WriteSpec of a new job":   "write",
				"WriteJSONAtomic new file": "write",
			},
		},
		{
			name: "no inodes left",
			opts: "size=1m,nr_inodes=16",
			fill: fillInodes,
			steps: map[string]string{
				"WriteStatus":              "create temp file",
				"WriteSpec over a job":     "create temp file",
				"WriteSpec of a new job":   "create directory",
				"WriteJSONAtomic new file": "create temp file",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mnt := mountTinyTmpfs(t, tt.opts)
			job := jobstore.JobDir(filepath.Join(mnt, "job-1"))
			newJob := jobstore.JobDir(filepath.Join(mnt, "job-2"))
			other := filepath.Join(mnt, "index.json")
			require.NoError(t, jobstore.WriteSpec(job, jobstore.JobSpec{ID: "job-1", Kind: "render"}))
			require.NoError(t, jobstore.WriteStatus(job, jobstore.JobStatus{State: jobstore.Running, Seq: 1}))
			oldSpec := readFile(t, job.SpecPath())
			oldStatus := readFile(t, job.StatusPath())

			free := tt.fill(t, mnt)

			writes := map[string]func() error{
				"WriteStatus": func() error {
					return jobstore.WriteStatus(job, jobstore.JobStatus{State: jobstore.Succeeded, Seq: 2})
				},
				"WriteSpec over a job": func() error {
					return jobstore.WriteSpec(job, jobstore.JobSpec{ID: "job-1", Kind: "other"})
				},
				"WriteSpec of a new job": func() error {
					return jobstore.WriteSpec(newJob, jobstore.JobSpec{ID: "job-2", Kind: "render"})
				},
				"WriteJSONAtomic new file": func() error {
					return jobstore.WriteJSONAtomic(other, map[string]int{"jobs": 2})
				},
			}
			require.Len(t, writes, len(tt.steps))
			for name, write := range writes {
				err := write()
				require.Error(t, err, "%s succeeded on a full filesystem", name)
				assert.ErrorIs(t, err, syscall.ENOSPC, "%s", name)
				var je *jobstore.Error
				if assert.ErrorAs(t, err, &je, "%s", name) {
					assert.Equal(t, tt.steps[name], je.Op, "%s: Op should name the failed step: %v", name, err)
				}
				assert.NotErrorIs(t, err, jobstore.ErrExists, "%s: the disk filled before job.json was published", name)

				assert.Equal(t, oldSpec, readFile(t, job.SpecPath()), "%s changed job.json", name)
				assert.Equal(t, oldStatus, readFile(t, job.StatusPath()), "%s changed status.json", name)
				assert.NoDirExists(t, string(newJob), "%s: a new job appears whole or not at all", name)
				assert.NoFileExists(t, other, "%s", name)
				requireNoTempFiles(t, mnt, "%s left a temp file", name)
			}

			free()
			for name, write := range writes {
				if name == "WriteSpec over a job" {
					assert.ErrorIs(t, write(), jobstore.ErrExists, "with space again, job.json is still written once")
					continue
				}
				assert.NoError(t, write(), "%s after space was freed", name)
			}
			st, err := jobstore.ReadStatus(job)
			require.NoError(t, err)
			assert.Equal(t, uint64(2), st.Seq)
			spec, err := jobstore.ReadSpec(newJob)
			require.NoError(t, err)
			assert.Equal(t, "job-2", spec.ID)
			assert.Equal(t, oldSpec, readFile(t, job.SpecPath()))
			requireNoTempFiles(t, mnt)
		})
	}
}

// mountTinyTmpfs mounts a tmpfs with opts on a fresh directory, unmounted at
// cleanup. It skips the test where that is impossible (not root, no mount
// permission in a container).
func mountTinyTmpfs(t *testing.T, opts string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		prereq.Skip(t, "root", "needs root to mount a tiny tmpfs for real ENOSPC")
	}
	mnt := tempDir(t)
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, opts); err != nil {
		prereq.Skip(t, "root", fmt.Sprintf("cannot mount tmpfs (%s) on %s: %v; needs CAP_SYS_ADMIN", opts, mnt, err))
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(mnt, 0); err != nil {
			t.Errorf("unmount %s: %v", mnt, err)
		}
	})
	return mnt
}

// fillSpace writes a filler file until the filesystem has no byte left, and
// returns a function that removes it.
func fillSpace(t *testing.T, mnt string) (free func()) {
	t.Helper()
	path := filepath.Join(mnt, "filler")
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	chunk := make([]byte, fillChunk)
	for {
		_, err := f.Write(chunk)
		if errors.Is(err, syscall.ENOSPC) {
			break
		}
		require.NoError(t, err, "filling %s", mnt)
	}
	return func() { require.NoError(t, os.Remove(path)) }
}

// fillInodes creates empty files until the filesystem has no inode left,
// and returns a function that removes them.
func fillInodes(t *testing.T, mnt string) (free func()) {
	t.Helper()
	dir := filepath.Join(mnt, "fillers")
	require.NoError(t, os.Mkdir(dir, 0o755))
	var made []string
	for i := 0; ; i++ {
		p := filepath.Join(dir, fmt.Sprint(i))
		f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if errors.Is(err, syscall.ENOSPC) {
			break
		}
		require.NoError(t, err, "filling the inodes of %s", mnt)
		require.NoError(t, f.Close())
		made = append(made, p)
	}
	return func() {
		for _, p := range made {
			require.NoError(t, os.Remove(p))
		}
	}
}
