package jobstore_test

import (
	"os"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// accessTime is path's access time, as stat(2) reads it.
func accessTime(t *testing.T, path string) time.Time {
	t.Helper()
	var st unix.Stat_t
	require.NoError(t, unix.Stat(path, &st))
	return time.Unix(st.Atim.Unix())
}

// TestLockJob_DoesNotReadAnEmptyLockFile: locking a job whose job.lock is
// empty (as Unlock leaves it) does not read it, so that its access time,
// older than its last change, is not written (on a journaled file system a
// read that updates it waits for the journal). The test first shows that a
// read of such a file updates its access time on this file system, and
// skips where none does (noatime).
func TestLockJob_DoesNotReadAnEmptyLockFile(t *testing.T) {
	dir := writeJob(t, tempDir(t), specAt("j1", 0), nil)
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	emptyAndOld := func() {
		t.Helper()
		require.NoError(t, os.WriteFile(dir.LockPath(), nil, 0o644))
		require.NoError(t, os.Chtimes(dir.LockPath(), old, time.Time{}))
		require.Equal(t, old, accessTime(t, dir.LockPath()))
	}

	emptyAndOld()
	f, err := os.Open(dir.LockPath())
	require.NoError(t, err)
	_, _ = f.ReadAt(make([]byte, 16), 0)
	require.NoError(t, f.Close())
	if accessTime(t, dir.LockPath()).Equal(old) {
		t.Skip("a read does not update the access time on this file system (noatime): nothing to observe")
	}

	emptyAndOld()
	lk, err := jobstore.LockJob(dir)
	require.NoError(t, err)
	require.NoError(t, lk.Unlock())
	require.Equal(t, old, accessTime(t, dir.LockPath()), "LockJob read the empty job.lock")
}
