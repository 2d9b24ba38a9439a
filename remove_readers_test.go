package jobstore_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/axqua/jobstore"
)

// removeReadersJobs is how many finished jobs the readers test removes
// while readers look.
const removeReadersJobs = 150

// finishedJobs writes n finished jobs under root, every third with a
// read-only cancel.json, and returns their IDs.
func finishedJobs(t *testing.T, root string, n int) []string {
	t.Helper()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("j%03d", i)
		dir := writeJob(t, root, specAt(ids[i], i), statusIn(jobstore.Succeeded, 5))
		if i%3 == 0 {
			req := jobstore.CancelRequest{SchemaVersion: jobstore.CancelSchemaVersion, JobID: ids[i], RequestedAt: submitted}
			writeRecord(t, dir.CancelPath(), req)
			require.NoError(t, os.Chmod(dir.CancelPath(), 0o444))
		}
	}
	return ids
}

// pythonRemovalReader reads a jobs root by path the way the format
// documentation tells other languages to: list the root, skip dot-names;
// read job.json, then status.json; a missing status.json is "nothing has
// run yet" only if job.json is still there, else the job was removed.
// Every job here has a status, so it prints "torn <id>" for a job.json
// seen without its status, and "half <id>" for a listed directory that is
// still there without its job.json; then, when stdin closes, "whole N
// gone M" with how many reads found the job whole or gone.
const pythonRemovalReader = `
import json, os, select, sys
root = sys.argv[1]
whole = gone = 0
while True:
    r, _, _ = select.select([sys.stdin], [], [], 0)
    if r and not sys.stdin.readline():
        break
    try:
        names = [n for n in os.listdir(root) if not n.startswith(".")]
    except OSError:
        continue
    for name in names:
        d = os.path.join(root, name)
        try:
            with open(os.path.join(d, "job.json")) as f:
                json.load(f)
        except FileNotFoundError:
            if os.path.isdir(d) and not os.path.exists(os.path.join(d, "job.json")):
                print("half", name, flush=True)
            gone += 1
            continue
        try:
            with open(os.path.join(d, "status.json")) as f:
                json.load(f)
            whole += 1
        except FileNotFoundError:
            if os.path.exists(os.path.join(d, "job.json")):
                print("torn", name, flush=True)
            gone += 1
print("whole", whole, "gone", gone, flush=True)
`

// Readers that look while hundreds of finished jobs are removed never see
// a job.json without its status, nor a directory half deleted: List leaves
// a job out or shows it whole; ReadSpec then ReadStatus give both records
// or ErrNotJob; a Python reader that follows the format documentation sees
// the same by path.
func TestRemove_ReadersSeeAJobWholeOrNotAtAll(t *testing.T) {
	root := tempDir(t)
	ids := finishedJobs(t, root, removeReadersJobs)
	done := make(chan struct{})
	var whole, gone atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() { // List
		for {
			select {
			case <-done:
				return
			default:
			}
			entries, err := jobstore.List(root)
			if err != nil {
				t.Errorf("List: %v", err)
				return
			}
			for _, e := range entries {
				if e.Err != nil || e.Spec == nil || e.Status == nil {
					t.Errorf("List showed %s in part: spec %v, status %v, err %v", e.Dir.ID(), e.Spec != nil, e.Status != nil, e.Err)
				}
			}
			gone.Add(int64(len(ids) - len(entries)))
			whole.Add(int64(len(entries)))
		}
	})
	for k := range 2 { // ReadSpec, then ReadStatus, job by job
		wg.Go(func() {
			for i := k; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				dir := jobstore.JobDir(filepath.Join(root, ids[i%len(ids)]))
				if _, err := jobstore.ReadSpec(dir); err != nil {
					if !errors.Is(err, jobstore.ErrNotJob) {
						t.Errorf("ReadSpec %s: %v", dir.ID(), err)
					}
					continue
				}
				st, err := jobstore.ReadStatus(dir)
				switch {
				case errors.Is(err, jobstore.ErrNotJob):
					gone.Add(1)
				case err != nil:
					t.Errorf("ReadStatus %s: %v", dir.ID(), err)
				case st == nil:
					t.Errorf("ReadStatus %s: job.json read a moment ago, and no status: a torn job", dir.ID())
				default:
					whole.Add(1)
				}
			}
		})
	}
	py := startPythonReader(t, root)

	for _, id := range ids {
		require.NoError(t, jobstore.Remove(jobstore.JobDir(filepath.Join(root, id))))
	}
	close(done)
	wg.Wait()
	require.Empty(t, names(t, root), "every job removed, nothing hidden left")
	require.Positive(t, whole.Load(), "the readers never saw a job whole: they proved nothing")
	require.Positive(t, gone.Load(), "the readers never saw a job gone: they proved nothing")
	if py != nil {
		pyWhole, pyGone := py()
		t.Logf("Python reader: %d reads whole, %d gone", pyWhole, pyGone)
	}
	t.Logf("Go readers: %d reads whole, %d gone", whole.Load(), gone.Load())
}

// startPythonReader runs pythonRemovalReader on root (nil where there is
// no python3: the Go readers still run); the returned function stops it,
// fails the test on any torn or half-deleted job it saw, and returns its
// counts, which must show it read during the removals.
func startPythonReader(t *testing.T, root string) func() (whole, gone int) {
	t.Helper()
	if runtime.GOOS == "windows" {
		return nil // the Python interop tests run on Unix
	}
	py := python(t)
	script := filepath.Join(tempDir(t), "removal_reader.py")
	writeFile(t, script, []byte(pythonRemovalReader))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // a hang guard
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, py, script, root)
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return func() (int, int) {
		t.Helper()
		require.NoError(t, in.Close())
		var bad []string
		var whole, gone int
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if _, err := fmt.Sscanf(sc.Text(), "whole %d gone %d", &whole, &gone); err != nil {
				bad = append(bad, sc.Text())
			}
		}
		require.NoError(t, cmd.Wait())
		require.Empty(t, bad, "the Python reader saw a torn or half-deleted job: %s", strings.Join(bad, "; "))
		require.Positive(t, whole+gone, "the Python reader read nothing: it proved nothing")
		return whole, gone
	}
}
