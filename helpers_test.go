package jobstore_test

// The helpers every test file of the package shares: job builders, record
// readers and writers, snapshots, the "no temp file left" check, and the
// plumbing of child processes (see roles_test.go for their bodies).

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
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
	if st == nil || !st.State.Terminal() {
		// The job's entry in the live index, as format.md tells a writer
		// in another language to make (liveindex_test.go tests a writer
		// that makes none).
		require.NoError(tb, os.MkdirAll(filepath.Join(root, jobstore.LiveDir, spec.ID), 0o755))
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

// finishSucceeded ends r's attempt succeeded and closes r.
func finishSucceeded(tb testing.TB, r *jobstore.Run) {
	tb.Helper()
	if err := r.Finish(jobstore.Outcome{State: jobstore.Succeeded}); err != nil {
		tb.Fatal(err)
	}
	if err := r.Close(); err != nil {
		tb.Fatal(err)
	}
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
func startRole(t testing.TB, role string, env ...string) *child {
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

// submitted is a timestamp the file format keeps exactly (UTC, microseconds).
var submitted = time.Date(2026, 11, 30, 9, 35, 40, 123456000, time.UTC)

// newJobDir returns the path of a job directory that does not exist yet.
func newJobDir(t testing.TB, id string) jobstore.JobDir {
	t.Helper()
	dir, err := jobstore.DirFor(tempDir(t), id)
	require.NoError(t, err)
	return dir
}

// newJob returns a job directory holding a job.json.
func newJob(t testing.TB, id string) jobstore.JobDir {
	t.Helper()
	dir := newJobDir(t, id)
	require.NoError(t, jobstore.WriteSpec(dir, jobstore.JobSpec{ID: id, Kind: "test", SubmittedAt: submitted}))
	return dir
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

func writeFile(t testing.TB, path string, data []byte) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, data, 0o644))
}

// fileState is what a reader must never change about a file.
type fileState struct {
	Mode    fs.FileMode
	ModTime time.Time
	Data    string
}

// snapshot records every name in dir (recursively) with its mode, mtime and
// bytes, to show that a read changed nothing.
func snapshot(t testing.TB, dir string) map[string]fileState {
	t.Helper()
	return snapshotOf(t, dir, true)
}

// fileSnapshot is snapshot without the directories' mtimes: a writer that
// fails or loses a race still creates and removes a temp file, which moves
// the directory's mtime, but must leave every file as it was.
func fileSnapshot(t testing.TB, dir string) map[string]fileState {
	t.Helper()
	return snapshotOf(t, dir, false)
}

func snapshotOf(t testing.TB, dir string, dirTimes bool) map[string]fileState {
	t.Helper()
	m := map[string]fileState{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		st := fileState{Mode: fi.Mode(), ModTime: fi.ModTime()}
		if d.IsDir() && !dirTimes {
			st.ModTime = time.Time{}
		}
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			st.Data = string(b)
		}
		rel, _ := filepath.Rel(dir, p)
		m[rel] = st
		return nil
	})
	require.NoError(t, err)
	return m
}

// names lists a directory's entries, sorted, but for an empty .submit (where
// Submit builds jobs; it stays between Submits): one that holds a build is
// listed.
func names(t testing.TB, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out []string
	for _, e := range ents {
		if e.Name() == ".submit" && e.IsDir() {
			if inner, err := os.ReadDir(filepath.Join(dir, e.Name())); err == nil && len(inner) == 0 {
				continue
			}
		}
		if e.Name() == jobstore.LiveDir && e.IsDir() && liveIndexClean(dir) {
			continue // the live index, with no entry for a job not in dir
		}
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out
}

// liveIndexClean reports whether every entry of root's LiveDir names a
// directory of root: no entry is left for a job removed.
func liveIndexClean(root string) bool {
	inner, err := os.ReadDir(filepath.Join(root, jobstore.LiveDir))
	if err != nil {
		return false
	}
	for _, de := range inner {
		if _, err := os.Lstat(filepath.Join(root, de.Name())); err != nil {
			return false
		}
	}
	return true
}

// errOf returns err as an *Error, failing the test if it is not one.
func errOf(t testing.TB, err error) *jobstore.Error {
	t.Helper()
	require.Error(t, err)
	var e *jobstore.Error
	require.ErrorAs(t, err, &e, "want a *jobstore.Error, got %T: %v", err, err)
	return e
}

func ptr[T any](v T) *T { return &v }

// submitJob makes a job as Submit leaves it (job.json, and status.json
// queued at seq 1) under a fresh root; an empty id gets a generated one.
func submitJob(t testing.TB, id string) jobstore.JobDir {
	t.Helper()
	dir, err := jobstore.Submit(tempDir(t), jobstore.JobSpec{ID: id, Kind: "test"})
	require.NoError(t, err)
	return dir
}

// requireNoTempFiles fails the test if a temp file of the package (see
// IsTempName) is left anywhere under dir; a dir that does not exist holds
// none. dir is a path or a JobDir.
func requireNoTempFiles[P ~string](t testing.TB, dir P, msgAndArgs ...any) {
	t.Helper()
	var temps []string
	err := filepath.WalkDir(string(dir), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if jobstore.IsTempName(d.Name()) {
			temps = append(temps, path)
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	require.NoError(t, err)
	msg := "temp files left behind"
	if len(msgAndArgs) > 0 {
		if format, ok := msgAndArgs[0].(string); ok {
			msg += ": " + fmt.Sprintf(format, msgAndArgs[1:]...)
		}
	}
	require.Empty(t, temps, msg)
}
