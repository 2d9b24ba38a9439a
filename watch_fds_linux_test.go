package jobstore_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// openFiles is how many descriptors the process holds.
func openFiles(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	return len(fds)
}
