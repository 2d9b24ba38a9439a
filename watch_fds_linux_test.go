package jobstore_test

import (
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// openFiles is how many descriptors the process holds.
func openFiles(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	return len(fds)
}

// settledOpenFiles is openFiles once the descriptors that earlier tests
// left to the garbage collector (an *os.File no longer referenced) are
// closed: a baseline that an earlier test's file, closed by its finalizer
// during the test that took it, does not move.
func settledOpenFiles(t *testing.T) int {
	t.Helper()
	n := openFiles(t)
	for range 20 {
		runtime.GC() // queues the finalizers of unreachable files
		time.Sleep(5 * time.Millisecond)
		m := openFiles(t)
		if m == n {
			break
		}
		n = m
	}
	return n
}
