package jobstore_test

import (
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"
)

// startChild starts a child made by childCommand and makes sure it never
// outlives the test: if the test ends (or fails) before the child was
// waited for, the child is killed and reaped.
func startChild(t testing.TB, cmd *exec.Cmd) {
	t.Helper()
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
}
