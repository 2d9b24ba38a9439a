//go:build unix

package jobstore_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The README's Python poller, on a job whose status.json is a FIFO (which a
// plain open() waits on for a writer, forever), a socket, a device or a
// link to a valid status: it refuses the file, as ReadStatus does, never
// waits on it, and never prints a status read through the link.
func TestReadme_PythonPollerRefusesAStatusThatIsNoRegularFile(t *testing.T) {
	example := readmePython(t)
	plants := map[string]func(t *testing.T, path string){
		"link to a valid status": func(t *testing.T, path string) {
			target := filepath.Join(tempDir(t), "status.json")
			writeFile(t, target, []byte(`{"schema_version": 1, "job_id": "j1", "state": "running", "seq": 2, "updated_at": "2026-01-02T03:04:05Z"}`))
			require.NoError(t, os.Symlink(target, path))
		},
	}
	for kind, plant := range specialFiles {
		plants[kind] = plant
	}
	for kind, plant := range plants {
		t.Run(kind, func(t *testing.T) {
			dir := newJob(t, "j1") // job.json, no status.json
			plant(t, dir.StatusPath())
			_, err := jobstore.ReadStatus(dir)
			require.ErrorIs(t, err, jobstore.ErrNotRegular, "the library refuses it: so must the poller")

			ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
			defer cancel()
			cmd := example(ctx, "poll", string(dir))
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err = cmd.Run()
			require.NoError(t, ctx.Err(), "the poller still waits on the %s after %v", kind, hangGuard)
			var ee *exec.ExitError
			require.True(t, errors.As(err, &ee), "the poller must fail: %v; stdout: %s", err, stdout.String())
			assert.Empty(t, stdout.String(), "nothing read through it")
			assert.Contains(t, stderr.String(), dir.StatusPath())
		})
	}
}
