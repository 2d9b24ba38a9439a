//go:build unix

package jobstore_test

import (
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stuckToolTimeout is the wait given to a program that never returns in
// TestRunTool_AStuckCommandFailsNamingIt.
const stuckToolTimeout = 200 * time.Millisecond

// TestRunTool_AStuckCommandFailsNamingIt: a helper program that hangs (a
// mount whose server never answers) is killed after its timeout and the
// error names the command, even when a process it forked holds its output
// open; one that ends in time returns its own result.
func TestRunTool_AStuckCommandFailsNamingIt(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh to stand in for a stuck mount")
	}
	for _, c := range []struct {
		name, script, want string
	}{
		{"hangs", "exec sleep 600", "sh -c exec sleep 600 did not return within 200ms and was killed"},
		{"a forked child holds the output", "sleep 5 & exec sleep 600", "sh -c sleep 5 & exec sleep 600 did not return within 200ms and was killed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := runTool(stuckToolTimeout, "sh", "-c", c.script)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
	t.Run("ends in time", func(t *testing.T) {
		out, err := runTool(toolTimeout, "sh", "-c", "echo mounted; exit 3")
		assert.Equal(t, "mounted\n", string(out))
		var exit *exec.ExitError
		require.ErrorAs(t, err, &exit)
		assert.Equal(t, 3, exit.ExitCode())
		assert.NotContains(t, err.Error(), "did not return")
	})
}
