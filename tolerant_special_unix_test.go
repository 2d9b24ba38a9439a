//go:build unix

package jobstore_test

import (
	"net"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/internal/prereq"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// hangGuard is how long a call that must return at once may take before the
// test calls it hung. A deadlock guard, not a speed limit: a reader that
// blocks on a FIFO never returns, and one that retries waits an hour.
const hangGuard = 30 * time.Second

// noRetry makes a retried read wait an hour: within hangGuard, the read
// returned after its first attempt.
var noRetry = jobstore.WithRetries(2, time.Hour)

// mustReturn runs fn and fails the test if it has not returned within
// hangGuard.
func mustReturn[T any](t *testing.T, what string, fn func() T) T {
	t.Helper()
	done := make(chan T, 1)
	go func() { done <- fn() }()
	select {
	case v := <-done:
		return v
	case <-time.After(hangGuard):
		t.Fatalf("%s has not returned after %v: it blocks on the file or retries it", what, hangGuard)
		panic("unreachable")
	}
}

// specialFiles plants, at path, each kind of file that is not a regular
// file; device needs root.
var specialFiles = map[string]func(t *testing.T, path string){
	"FIFO": func(t *testing.T, path string) { require.NoError(t, unix.Mkfifo(path, 0o644)) },
	"socket": func(t *testing.T, path string) {
		if len(path) >= 100 {
			t.Skipf("the path is too long for a unix socket (%d bytes)", len(path))
		}
		l, err := net.Listen("unix", path)
		require.NoError(t, err)
		t.Cleanup(func() { l.Close() })
	},
	"device": func(t *testing.T, path string) {
		if runtime.GOOS != "linux" {
			t.Skip("a device node is made here on Linux only (mknod c 1 3)")
		}
		if os.Geteuid() != 0 {
			prereq.Skip(t, "root", "a device node is made as root (mknod c 1 3)")
		}
		// Linux's /dev/null (char 1:3): opening it has no effect.
		out, err := runTool(toolTimeout, "mknod", path, "c", "1", "3")
		require.NoError(t, err, "%s", out)
	},
}

// TestReaders_NonRegularRecordIsRefusedAtOnce: a FIFO, a socket or a device
// named status.json or job.json makes ReadStatus/ReadSpec return
// ErrNotRegular at once (never blocking in open or read, never retried),
// and costs List that entry only.
func TestReaders_NonRegularRecordIsRefusedAtOnce(t *testing.T) {
	for kind, plant := range specialFiles {
		t.Run(kind+" status.json", func(t *testing.T) {
			root := tempDir(t)
			good := writeJob(t, root, specAt("a-good", 0), statusIn(jobstore.Running, 2))
			bad := writeJob(t, root, specAt("b-bad", 1), nil)
			plant(t, bad.StatusPath())

			err := mustReturn(t, "ReadStatus", func() error { _, err := jobstore.ReadStatus(bad, noRetry); return err })
			requireNotRegular(t, err, bad.StatusPath())
			_, err = jobstore.ReadSpec(bad)
			require.NoError(t, err, "job.json is still readable")

			entries := mustReturn(t, "List", func() []jobstore.Entry {
				entries, err := jobstore.List(root)
				require.NoError(t, err)
				return entries
			})
			require.Len(t, entries, 2)
			assert.Equal(t, good, entries[0].Dir)
			assert.NoError(t, entries[0].Err)
			require.NotNil(t, entries[0].Status)
			assert.Equal(t, bad, entries[1].Dir)
			requireNotRegular(t, entries[1].Err, bad.StatusPath())
			assert.NotNil(t, entries[1].Spec, "the entry keeps its readable spec")
		})
		t.Run(kind+" job.json", func(t *testing.T) {
			root := tempDir(t)
			writeJob(t, root, specAt("a-good", 0), nil)
			bad := jobstore.JobDir(filepath.Join(root, "b-bad"))
			require.NoError(t, os.Mkdir(string(bad), 0o755))
			plant(t, bad.SpecPath())

			err := mustReturn(t, "ReadSpec", func() error { _, err := jobstore.ReadSpec(bad, noRetry); return err })
			requireNotRegular(t, err, bad.SpecPath())
			entries := mustReturn(t, "List", func() []jobstore.Entry {
				entries, err := jobstore.List(root)
				require.NoError(t, err)
				return entries
			})
			require.Len(t, entries, 2)
			assert.NoError(t, entries[0].Err)
			requireNotRegular(t, entries[1].Err, bad.SpecPath())
		})
		t.Run(kind+" job.lock", func(t *testing.T) {
			dir := writeJob(t, tempDir(t), specAt("j1", 0), nil)
			plant(t, dir.LockPath())
			err := mustReturn(t, "LockJob", func() error {
				lk, err := jobstore.LockJob(dir)
				if err == nil {
					_ = lk.Unlock()
				}
				return err
			})
			requireNotRegular(t, err, dir.LockPath())
		})
	}
}

func requireNotRegular(t *testing.T, err error, path string) {
	t.Helper()
	require.ErrorIs(t, err, jobstore.ErrNotRegular, "%v", err)
	e := errOf(t, err)
	assert.Equal(t, path, e.Path)
	assert.Contains(t, e.Msg, "not a regular file")
	assert.NotEmpty(t, e.Remedy)
}

// TestWait_StatusThatIsNotARegularFileEndsTheWait: a FIFO, a socket or a
// device named status.json ends Wait at once with ErrNotRegular naming it,
// whether it was there first or replaced the record while Wait waited.
func TestWait_StatusThatIsNotARegularFileEndsTheWait(t *testing.T) {
	for kind, plant := range specialFiles {
		for _, while := range []bool{false, true} {
			name := kind + ", before the wait"
			if while {
				name = kind + ", while waiting"
			}
			t.Run(name, func(t *testing.T) {
				dir := writeJob(t, tempDir(t), specAt("j", 0), statusIn(jobstore.Running, 2))
				if !while {
					require.NoError(t, os.Remove(dir.StatusPath()))
					plant(t, dir.StatusPath())
				}
				ch := waitAsync(t.Context(), dir, jobstore.WithPollInterval(10*time.Millisecond))
				if while {
					time.Sleep(idleWhile)
					tmp := filepath.Join(string(dir), "planted")
					plant(t, tmp)
					require.NoError(t, os.Rename(tmp, dir.StatusPath()))
				}
				_, err := awaitWaitErr(t, ch)
				requireNamesFile(t, err, jobstore.ErrNotRegular, dir.StatusPath())
			})
		}
	}
}
