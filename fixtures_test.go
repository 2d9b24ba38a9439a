package jobstore_test

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/require"
)

// Environment of the lifecycle child roles.
const (
	dirEnv   = "JOBSTORE_TEST_DIR"   // the job directory a child works on
	countEnv = "JOBSTORE_TEST_COUNT" // how many IDs the jobids child prints
)

// childTimeout bounds how long a test waits for a child to say something.
const childTimeout = 30 * time.Second

// writeJob makes a job directory by writing the two records directly, in
// the file format (JobSpec and JobStatus marshal to it), without fsyncs:
// fixtures of thousands of jobs must be quick to build. A nil st leaves no
// status.json.
func writeJob(tb testing.TB, root string, spec jobstore.JobSpec, st *jobstore.JobStatus) jobstore.JobDir {
	tb.Helper()
	dir, err := jobstore.DirFor(root, spec.ID)
	require.NoError(tb, err)
	require.NoError(tb, os.MkdirAll(string(dir), 0o755))
	spec.SchemaVersion = jobstore.JobSchemaVersion
	writeRecord(tb, dir.SpecPath(), spec)
	if st != nil {
		st.SchemaVersion = jobstore.StatusSchemaVersion
		st.JobID = spec.ID
		writeRecord(tb, dir.StatusPath(), *st)
	}
	return dir
}

func writeRecord(tb testing.TB, path string, v any) {
	tb.Helper()
	b, err := json.Marshal(v)
	require.NoError(tb, err)
	require.NoError(tb, os.WriteFile(path, b, 0o644))
}

// specAt is a spec submitted at base + i seconds.
func specAt(id string, i int) jobstore.JobSpec {
	base := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	return jobstore.JobSpec{ID: id, Kind: "test", SubmittedAt: base.Add(time.Duration(i) * time.Second)}
}

// statusIn is a status in state st with seq.
func statusIn(st jobstore.State, seq uint64) *jobstore.JobStatus {
	return &jobstore.JobStatus{State: st, Seq: seq, UpdatedAt: time.Date(2026, 11, 30, 9, 30, 0, 0, time.UTC)}
}

// readStatus reads status.json, which must exist.
func readStatus(tb testing.TB, dir jobstore.JobDir) jobstore.JobStatus {
	tb.Helper()
	st, err := jobstore.ReadStatus(dir)
	require.NoError(tb, err)
	require.NotNil(tb, st, "no status.json in %s", dir)
	return *st
}

// child is a running child process with its stdin and stdout.
type child struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
}

// startRole starts role with env, with pipes to its stdin and stdout; it is
// killed at cleanup if still running (startChild).
func startRole(t *testing.T, role string, env ...string) *child {
	t.Helper()
	cmd := childCommand(t, role, env...)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	startChild(t, cmd)
	t.Cleanup(func() { _ = stdin.Close() })
	return &child{cmd: cmd, stdin: stdin, out: bufio.NewReader(stdout)}
}

// line reads the child's next line of output, failing after childTimeout.
func (c *child) line(t *testing.T) string {
	t.Helper()
	type result struct {
		s   string
		err error
	}
	ch := make(chan result, 1)
	go func() {
		s, err := c.out.ReadString('\n')
		ch <- result{strings.TrimSpace(s), err}
	}()
	select {
	case r := <-ch:
		require.NoError(t, r.err, "child %s said nothing", c.cmd.Path)
		return r.s
	case <-time.After(childTimeout):
		t.Fatalf("child said nothing for %v", childTimeout)
		return ""
	}
}

// tempFile creates a file in dir and sets its modification time to age ago.
func tempFile(t *testing.T, dir, name string, age time.Duration) string {
	t.Helper()
	path := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(path, []byte("{"), 0o600))
	when := time.Now().Add(-age)
	require.NoError(t, os.Chtimes(path, when, when))
	return path
}
