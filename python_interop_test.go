package jobstore_test

// The Python module (python/jobstore.py) against this library, both ways:
// Python submits and Go runs; Go rewrites status.json under a kill loop
// while Python reads; Python cancels a Go runner; and the module's own
// unittest suite. The JSON Schemas' verdict on what Python writes is in
// internal/schematest.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/axqua/jobstore"
)

// pythonRounds is how many writer processes the reader test kills while
// Python reads.
const pythonRounds = 40

// pyScript is a Python script started by startPython: its stdout read line
// by line, its stderr kept for failure messages.
type pyScript struct {
	cmd    *exec.Cmd
	lines  *bufio.Scanner
	stderr *bytes.Buffer
	stdin  io.WriteCloser // the script's standard input
}

// startPython runs code with the python3 interpreter, with python/ on its
// module path and args as sys.argv[1:]; it is killed at cleanup if still
// running.
func startPython(t *testing.T, code string, args ...string) *pyScript {
	t.Helper()
	py := python(t)
	script := filepath.Join(tempDir(t), "script.py")
	writeFile(t, script, []byte(code))
	module, err := filepath.Abs("python")
	require.NoError(t, err)
	cmd := exec.Command(py, append([]string{script}, args...)...)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+module, "PYTHONDONTWRITEBYTECODE=1")
	s := &pyScript{cmd: cmd, stderr: new(bytes.Buffer)}
	cmd.Stderr = s.stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	s.lines = bufio.NewScanner(out)
	s.stdin, err = cmd.StdinPipe()
	require.NoError(t, err)
	startChild(t, cmd)
	return s
}

// line returns the script's next line of output, failing after
// childTimeout or when the script ends first.
func (s *pyScript) line(t *testing.T) string {
	t.Helper()
	got := make(chan bool, 1)
	go func() { got <- s.lines.Scan() }()
	select {
	case ok := <-got:
		require.True(t, ok, "the Python script printed nothing more; stderr:\n%s", s.stderr)
		return s.lines.Text()
	case <-time.After(childTimeout):
		t.Fatalf("the Python script said nothing for %v; stderr:\n%s", childTimeout, s.stderr)
		return ""
	}
}

// send writes line to the script's standard input.
func (s *pyScript) send(t *testing.T, line string) {
	t.Helper()
	_, err := io.WriteString(s.stdin, line+"\n")
	require.NoError(t, err)
}

// wait waits for the script to exit, which it must do with status 0.
func (s *pyScript) wait(t *testing.T) {
	t.Helper()
	_ = s.stdin.Close()
	for s.lines.Scan() {
		t.Logf("python: %s", s.lines.Text())
	}
	require.NoError(t, s.cmd.Wait(), "stderr:\n%s", s.stderr)
}

// TestPython_SubmitsGoRunsPythonWaits: a job submitted by jobstore.submit
// is found by StartNext, run and finished by Go, and jobstore.wait returns
// its final status.
func TestPython_SubmitsGoRunsPythonWaits(t *testing.T) {
	root := filepath.Join(tempDir(t), "jobs")
	s := startPython(t, `
import json, sys, jobstore
job_dir = jobstore.submit(sys.argv[1], "render", {"frames": 3, "scene": "café <night> & day"},
                          labels={"team": "vfx"}, submitted_by="notebook", create=True)
print(job_dir, flush=True)
st = jobstore.wait(job_dir, timeout=120, poll=0.05)
print(json.dumps(st), flush=True)
`, root)
	dir := jobstore.JobDir(s.line(t))
	require.Equal(t, root, filepath.Dir(string(dir)))
	require.NoError(t, jobstore.ValidateJobID(dir.ID()))

	spec, err := jobstore.ReadSpec(dir)
	require.NoError(t, err)
	assert.Equal(t, "render", spec.Kind)
	assert.Equal(t, "notebook", spec.SubmittedBy)
	assert.Equal(t, map[string]string{"team": "vfx"}, spec.Labels)
	assert.JSONEq(t, `{"frames": 3, "scene": "café <night> & day"}`, string(spec.Params))
	st, err := jobstore.ReadStatus(dir)
	require.NoError(t, err)
	require.NotNil(t, st, "Python wrote no status.json: Go would never start the job")
	assert.Equal(t, jobstore.Queued, st.State)
	assert.Equal(t, uint64(1), st.Seq)
	entries, err := jobstore.List(root)
	require.NoError(t, err)
	require.Len(t, entries, 1, "only the job: the build directory is hidden")
	require.NoError(t, entries[0].Err)

	ctx, stop := context.WithCancel(context.Background())
	stop() // look once: the job is there
	run, err := jobstore.StartNext(ctx, root, jobstore.WithKinds("render"))
	require.NoError(t, err)
	require.Equal(t, dir, run.Dir())
	require.NoError(t, run.Progress(0.5, "frame 2/3"))
	require.NoError(t, run.Finish(jobstore.Outcome{State: jobstore.Succeeded, Message: "3 frames"}))
	require.NoError(t, run.Close())

	var final map[string]any
	require.NoError(t, json.Unmarshal([]byte(s.line(t)), &final))
	assert.Equal(t, "succeeded", final["state"])
	assert.Equal(t, "3 frames", final["message"])
	assert.Equal(t, dir.ID(), final["job_id"])
	s.wait(t)
}

// pythonReader reads status.json of argv[1] with jobstore.read_status until
// the file argv[2] exists, and prints what it saw as JSON: reads, absent
// (None) reads and whether any came after a record, errors, seqs that went
// backwards, and retries (a torn moment read again: never, with an atomic
// writer).
const pythonReader = `
import json, os, sys, jobstore
job_dir, stop = sys.argv[1], sys.argv[2]
retries = []
real_sleep = jobstore.time.sleep
def counted(s):
    retries.append(s)
    real_sleep(s)
jobstore.time.sleep = counted
out = {"reads": 0, "absent": 0, "absent_after_record": 0, "errors": [], "backwards": 0, "last_seq": 0, "seqs": 0}
print("ready", flush=True)
while not os.path.exists(stop):
    try:
        st = jobstore.read_status(job_dir)
    except jobstore.JobstoreError as e:
        out["errors"].append("%s: %s" % (e.code, e))
        continue
    out["reads"] += 1
    if st is None:
        out["absent"] += 1
        if out["last_seq"]:
            out["absent_after_record"] += 1
        continue
    if st["seq"] < out["last_seq"]:
        out["backwards"] += 1
    if st["seq"] != out["last_seq"]:
        out["seqs"] += 1
    out["last_seq"] = st["seq"]
out["retries"] = len(retries)
print(json.dumps(out), flush=True)
`

// TestPython_ReadsWhileGoWritersAreKilled: while writer processes rewrite
// status.json as fast as they can and are killed at random instants,
// pythonRounds times, a Python reader never sees a torn record, an error,
// a record older than one it has seen, or an absent status.json once one
// was written.
func TestPython_ReadsWhileGoWritersAreKilled(t *testing.T) {
	dir := newJob(t, "j1") // no status.json yet: the reader's first reads may find none
	stop := filepath.Join(tempDir(t), "stop")
	s := startPython(t, pythonReader, string(dir), stop)
	require.Equal(t, "ready", s.line(t))

	var seq uint64
	acks := 0
	for range pythonRounds {
		r := runKilledWriter(t, dir, seq)
		acks += r.acks
		st, err := jobstore.ReadStatus(dir)
		require.NoError(t, err)
		if st != nil { // nil: the first writers were killed before their first write
			seq = st.Seq
		}
	}
	writeFile(t, stop, nil)

	var got struct {
		Reads             int      `json:"reads"`
		Absent            int      `json:"absent"`
		AbsentAfterRecord int      `json:"absent_after_record"`
		Errors            []string `json:"errors"`
		Backwards         int      `json:"backwards"`
		LastSeq           uint64   `json:"last_seq"`
		Seqs              int      `json:"seqs"`
		Retries           int      `json:"retries"`
	}
	line := s.line(t)
	require.NoError(t, json.Unmarshal([]byte(line), &got), "%s", line)
	s.wait(t)
	t.Logf("%d writers killed after %d acknowledged writes; Python read %d times, saw %d records, %d absent before the first",
		pythonRounds, acks, got.Reads, got.Seqs, got.Absent)

	assert.Empty(t, got.Errors, "the reader saw errors")
	assert.Zero(t, got.AbsentAfterRecord, "status.json read as absent after it was written")
	assert.Zero(t, got.Backwards, "a record older than one already read")
	assert.Zero(t, got.Retries, "a torn moment: a read that had to be made again")
	require.Positive(t, acks, "the writers wrote nothing before they were killed")
	require.Greater(t, got.Seqs, 1, "the reader saw no more than one record: it did not read during the writes")
	assert.LessOrEqual(t, got.LastSeq, seq, "the reader saw a seq no writer wrote")
}

// pythonCanceller requests a cancel of argv[1] with jobstore.request_cancel,
// prints what it returned, then waits for the job to end and prints its
// state and message.
const pythonCanceller = `
import sys, jobstore
print(jobstore.request_cancel(sys.argv[1], by="py-gui", reason="wrong input"), flush=True)
st = jobstore.wait(sys.argv[1], timeout=120, poll=0.05)
print(st["state"], st.get("message", ""), flush=True)
`

// TestPython_CancelsAGoJob: cancel.json written by jobstore.request_cancel
// is heard by a running Go job through Run.Context, naming the requester;
// a queued job is refused by Start, which writes cancelled; and Python's
// wait sees both end.
func TestPython_CancelsAGoJob(t *testing.T) {
	t.Run("running", func(t *testing.T) {
		dir, err := jobstore.Submit(filepath.Join(tempDir(t), "jobs"), jobstore.JobSpec{ID: "j1", Kind: "render"})
		require.NoError(t, err)
		run, err := jobstore.Start(dir)
		require.NoError(t, err)
		defer run.Close()

		s := startPython(t, pythonCanceller, string(dir))
		require.Equal(t, "True", s.line(t))
		select {
		case <-run.Context().Done():
		case <-time.After(childTimeout):
			t.Fatalf("the runner did not hear the cancel request in %v", childTimeout)
		}
		cause := context.Cause(run.Context())
		require.ErrorIs(t, cause, jobstore.ErrCancelRequested)
		assert.Contains(t, cause.Error(), `"py-gui"`)
		assert.Contains(t, cause.Error(), "wrong input")
		require.NoError(t, run.Finish(jobstore.Outcome{State: jobstore.Cancelled, Message: "stopped on request"}))
		assert.Equal(t, "cancelled stopped on request", s.line(t))
		s.wait(t)

		req, err := jobstore.ReadCancel(dir)
		require.NoError(t, err)
		assert.Equal(t, "py-gui", req.RequestedBy)
		assert.Equal(t, "wrong input", req.Reason)
		assert.Empty(t, leftoverTemps(t, string(dir)))
	})

	t.Run("queued", func(t *testing.T) {
		dir, err := jobstore.Submit(filepath.Join(tempDir(t), "jobs"), jobstore.JobSpec{ID: "j1", Kind: "render"})
		require.NoError(t, err)
		s := startPython(t, pythonCanceller, string(dir))
		require.Equal(t, "True", s.line(t))
		_, err = jobstore.Start(dir)
		require.ErrorIs(t, err, jobstore.ErrCancelRequested)
		line := s.line(t)
		assert.True(t, strings.HasPrefix(line, "cancelled "), "%s", line)
		assert.Contains(t, line, "py-gui")
		s.wait(t)
	})
}

// leftoverTemps lists the temp files under dir.
func leftoverTemps(t *testing.T, dir string) []string {
	t.Helper()
	var temps []string
	require.NoError(t, filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && jobstore.IsTempName(d.Name()) {
			temps = append(temps, path)
		}
		return err
	}))
	return temps
}

// TestPython_ModuleTestsPass runs the module's own tests, python3 -m
// unittest, standard library only; none may skip on Unix.
func TestPython_ModuleTestsPass(t *testing.T) {
	py := python(t)
	cmd, finish := toolCommand(toolTimeout, py, "-m", "unittest", "discover", "-s", "python", "-v")
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	err = finish(err)
	require.NoError(t, err, "%s", out)
	m := regexp.MustCompile(`(?m)^Ran (\d+) tests? in`).FindSubmatch(out)
	require.NotNil(t, m, "%s", out)
	n, err := strconv.Atoi(string(m[1]))
	require.NoError(t, err)
	require.GreaterOrEqual(t, n, 30, "the module's tests were not all found:\n%s", out)
	assert.NotContains(t, string(out), "skipped", "a module test skipped on Unix:\n%s", out)
	t.Logf("python3 -m unittest: %d tests passed", n)
}

// pythonClaimer reads "retry DIR" and "remove DIR" lines; for each it
// prints "ready", waits for a "go" line, acts, and answers "ok" or the
// error's code ("locked", "wrong_state", ...) and message.
const pythonClaimer = `
import sys, jobstore
for line in sys.stdin:
    op, job_dir = line.split(None, 1)
    print("ready", flush=True)
    sys.stdin.readline()
    try:
        getattr(jobstore, op)(job_dir.strip())
        print("ok", flush=True)
    except jobstore.JobstoreError as e:
        print(e.code, e, flush=True)
`

// claimRounds is how many times the racing tests race Go against Python;
// round i gives Python a head start of (i % 4) × claimStagger, so that
// either side wins some rounds.
const (
	claimRounds  = 16
	claimStagger = time.Millisecond
)

// pyClaim asks the pythonClaimer s to do op on dir, and once it is ready
// lets it go, waiting the round's head start: the caller then races it.
func pyClaim(t *testing.T, s *pyScript, op string, dir jobstore.JobDir, round int) {
	t.Helper()
	s.send(t, op+" "+string(dir))
	require.Equal(t, "ready", s.line(t))
	s.send(t, "go")
	time.Sleep(time.Duration(round%4) * claimStagger)
}

// failedJob submits the job id under root and runs it to failed with Go.
func failedJob(t *testing.T, root, id string) jobstore.JobDir {
	t.Helper()
	dir, err := jobstore.Submit(root, jobstore.JobSpec{ID: id, Kind: "render"})
	require.NoError(t, err)
	run, err := jobstore.Start(dir)
	require.NoError(t, err)
	require.NoError(t, run.Finish(jobstore.Outcome{State: jobstore.Failed, Error: "exit 3"}))
	require.NoError(t, run.Close())
	return dir
}

// codeOf is the answer of pythonClaimer, or the *Error code of a Go error.
func codeOf(answer string) string { code, _, _ := strings.Cut(answer, " "); return code }

func goCode(err error) string {
	if err == nil {
		return "ok"
	}
	return string(jobstore.ErrorCode(err))
}

// TestPython_RetryRacesGoRetry: Go's Retry and Python's retry on the same
// failed job, started together, claimRounds times: exactly one acts (one
// attempt added, seq up by one), the other is locked or wrong_state.
func TestPython_RetryRacesGoRetry(t *testing.T) {
	root := filepath.Join(tempDir(t), "jobs")
	s := startPython(t, pythonClaimer)
	var won [2]int // Python, Go
	for i := range claimRounds {
		dir := failedJob(t, root, "j"+strconv.Itoa(i))
		before, err := jobstore.ReadStatus(dir)
		require.NoError(t, err)

		pyClaim(t, s, "retry", dir, i)
		goErr := jobstore.Retry(dir)
		py := s.line(t)

		winners := 0
		for side, code := range []string{codeOf(py), goCode(goErr)} {
			switch code {
			case "ok":
				winners++
				won[side]++
			case "locked", "wrong_state":
			default:
				t.Fatalf("round %d: Python %q, Go %v: a loser must be locked or wrong_state", i, py, goErr)
			}
		}
		require.Equal(t, 1, winners, "round %d: Python %q, Go %v", i, py, goErr)
		st, err := jobstore.ReadStatus(dir)
		require.NoError(t, err)
		assert.Equal(t, jobstore.Queued, st.State)
		assert.Equal(t, before.Seq+1, st.Seq, "round %d: one retry, one seq", i)
		assert.Equal(t, before.Attempt+1, st.Attempt)
		require.Len(t, st.Attempts, 1, "round %d: one attempt added", i)
		assert.Equal(t, jobstore.Failed, st.Attempts[0].State)
		assert.Equal(t, "retried by hand after attempt 1 (failed)", st.Message)
		assert.Nil(t, st.RetryAt)
		assert.Empty(t, leftoverTemps(t, string(dir)))
	}
	s.wait(t)
	t.Logf("Python won %d rounds, Go %d", won[0], won[1])
}

// TestPython_RetriedJobIsRunByAGoWorker: a Worker already waiting on the
// root notices a job Python retried and runs it as its second attempt.
func TestPython_RetriedJobIsRunByAGoWorker(t *testing.T) {
	for _, last := range []jobstore.State{jobstore.Failed, jobstore.Cancelled} {
		t.Run(string(last), func(t *testing.T) {
			root := filepath.Join(tempDir(t), "jobs")
			dir, err := jobstore.Submit(root, jobstore.JobSpec{ID: "j1", Kind: "render"})
			require.NoError(t, err)
			run, err := jobstore.Start(dir)
			require.NoError(t, err)
			if last == jobstore.Cancelled {
				err := jobstore.RequestCancel(dir, jobstore.CancelRequest{RequestedBy: "test"})
				require.NoError(t, err)
			}
			require.NoError(t, run.Finish(jobstore.Outcome{State: last}))
			require.NoError(t, run.Close())

			ran := make(chan uint64, 1)
			ctx, stop := context.WithCancel(context.Background())
			w, err := jobstore.NewWorker(root, func(ctx context.Context, run *jobstore.Run) error {
				ran <- run.Status().Attempt
				return nil
			})
			require.NoError(t, err)
			done := make(chan error, 1)
			go func() { done <- w.Run(ctx) }()
			t.Cleanup(func() { stop(); <-done })

			s := startPython(t, pythonClaimer)
			pyClaim(t, s, "retry", dir, 0)
			require.Equal(t, "ok", s.line(t))
			s.wait(t)
			req, err := jobstore.ReadCancel(dir)
			require.NoError(t, err)
			assert.Nil(t, req, "a retried cancelled job keeps no cancel request")

			select {
			case n := <-ran:
				assert.Equal(t, uint64(3), n, "attempt 1 ran, 2 was the retry's claim")
			case <-time.After(childTimeout):
				t.Fatalf("the worker did not run the retried job in %v", childTimeout)
			}
			require.Eventually(t, func() bool {
				st, err := jobstore.ReadStatus(dir)
				return err == nil && st.State == jobstore.Succeeded
			}, childTimeout, 10*time.Millisecond)
			st, err := jobstore.ReadStatus(dir)
			require.NoError(t, err)
			require.Len(t, st.Attempts, 2, "the attempt Python retried, then the Worker's")
			assert.Equal(t, last, st.Attempts[0].State)
			assert.Equal(t, jobstore.Succeeded, st.Attempts[1].State)
		})
	}
}

// TestPython_RemoveRefusedWhileGoRunHolds: Python's remove leaves a job
// that a Go Run holds: running (wrong_state), or finished but its Run not
// yet closed (locked, job.lock held).
func TestPython_RemoveRefusedWhileGoRunHolds(t *testing.T) {
	for _, finish := range []bool{false, true} {
		t.Run(map[bool]string{false: "running", true: "finished-unclosed"}[finish], func(t *testing.T) {
			dir, err := jobstore.Submit(filepath.Join(tempDir(t), "jobs"), jobstore.JobSpec{ID: "j1", Kind: "render"})
			require.NoError(t, err)
			run, err := jobstore.Start(dir)
			require.NoError(t, err)
			defer run.Close()
			want := "wrong_state"
			if finish {
				require.NoError(t, run.Finish(jobstore.Outcome{State: jobstore.Succeeded}))
				want = "locked"
			}
			s := startPython(t, pythonClaimer)
			pyClaim(t, s, "remove", dir, 0)
			assert.Equal(t, want, codeOf(s.line(t)))
			s.wait(t)
			if !finish {
				require.NoError(t, run.Progress(0.5, "still mine"), "the runner still owns the job")
			}
			_, err = jobstore.ReadSpec(dir)
			require.NoError(t, err, "the job is still there")
		})
	}
}

// TestPython_RemoveRacesGoRetryAndStart: Python removes a failed job while
// Go retries and starts it, claimRounds times: never both removed and
// started; whichever lost left no trace.
func TestPython_RemoveRacesGoRetryAndStart(t *testing.T) {
	root := filepath.Join(tempDir(t), "jobs")
	s := startPython(t, pythonClaimer)
	removed := 0
	for i := range claimRounds {
		dir := failedJob(t, root, "j"+strconv.Itoa(i))
		pyClaim(t, s, "remove", dir, i)
		var run *jobstore.Run
		err := jobstore.Retry(dir)
		if err == nil {
			run, err = jobstore.Start(dir)
		}
		py := s.line(t)
		_, specErr := jobstore.ReadSpec(dir)
		switch codeOf(py) {
		case "ok":
			removed++
			require.Nil(t, run, "round %d: a job was both removed and started", i)
			require.ErrorIs(t, specErr, jobstore.ErrNotJob, "round %d", i)
			require.True(t, errors.Is(err, jobstore.ErrNotJob) || errors.Is(err, jobstore.ErrLocked), "round %d: %v", i, err)
		case "locked", "wrong_state":
			require.NoError(t, specErr, "round %d: Python lost, yet the job is gone", i)
		default:
			t.Fatalf("round %d: Python %q", i, py)
		}
		if run != nil {
			require.NoError(t, run.Finish(jobstore.Outcome{State: jobstore.Succeeded}))
			require.NoError(t, run.Close())
		}
	}
	s.wait(t)
	entries, err := os.ReadDir(root)
	require.NoError(t, err)
	for _, e := range entries {
		assert.False(t, strings.HasPrefix(e.Name(), ".remove-"), "a removal left %s", e.Name())
	}
	t.Logf("Python removed %d of %d jobs", removed, claimRounds)
}

// TestPython_RemoveEmptiesAgainAHiddenDirectoryRefilledMeanwhile: a
// process that opened the job directory before Python's remove renamed it
// may make a file in it after remove listed it (a claimant that locks
// job.lock, creating it, and then finds the job gone). remove empties the
// hidden directory again, as Go's Remove does, and leaves nothing; a hidden
// directory that another process deleted meanwhile is removed all the same.
func TestPython_RemoveEmptiesAgainAHiddenDirectoryRefilledMeanwhile(t *testing.T) {
	tests := []struct {
		name, after string // Python run once right after status.json, the last name, is removed
	}{
		{"refilled", "os.close(os.open(jobstore.LOCK_FILE, os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=dfd))"},
		{"deleted by another process", "os.rmdir(parent)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := filepath.Join(tempDir(t), "jobs")
			dir := failedJob(t, root, "j1")
			s := startPython(t, `
import os, sys, jobstore
remove_at = jobstore._remove_at
done = []
def after(dfd, name, dev, parent):
    remove_at(dfd, name, dev, parent)
    if name == jobstore.STATUS_FILE and not done:
        done.append(parent)
        `+tc.after+`
jobstore._remove_at = after
try:
    jobstore.remove(sys.argv[1])
    print("ok", len(done), flush=True)
except jobstore.JobstoreError as e:
    print(e.code, e, flush=True)
`, string(dir))
			require.Equal(t, "ok 1", s.line(t), "the hidden directory was changed once, after its last name was removed")
			s.wait(t)
			entries, err := os.ReadDir(root)
			require.NoError(t, err)
			for _, e := range entries {
				assert.NotEqual(t, dir.ID(), e.Name(), "the job is still in the root")
				assert.False(t, strings.HasPrefix(e.Name(), ".remove-"), "the removal left %s", e.Name())
			}
		})
	}
}

// TestPython_RetryWritesWhatGoRetryWrites: the status.json Python's retry
// writes is Go's Retry's, key for key and in the same order, but for the
// job ID and the time of the write.
func TestPython_RetryWritesWhatGoRetryWrites(t *testing.T) {
	root := filepath.Join(tempDir(t), "jobs")
	goDir, pyDir := failedJob(t, root, "go"), failedJob(t, root, "py")
	require.NoError(t, jobstore.Retry(goDir))
	s := startPython(t, pythonClaimer)
	pyClaim(t, s, "retry", pyDir, 0)
	require.Equal(t, "ok", s.line(t))
	s.wait(t)

	normal := func(dir jobstore.JobDir) string {
		data, err := os.ReadFile(dir.StatusPath())
		require.NoError(t, err)
		text := strings.ReplaceAll(string(data), `"`+dir.ID()+`"`, `"ID"`)
		return regexp.MustCompile(`"\d{4}-\d\d-\d\dT[0-9:.]+\+00:00"`).ReplaceAllString(text, `"TIME"`)
	}
	assert.Equal(t, normal(goDir), normal(pyDir))
	for _, dir := range []jobstore.JobDir{goDir, pyDir} {
		_, err := os.Stat(filepath.Join(string(dir), ".fenced-2", "ended"))
		assert.NoError(t, err, "the retry's claim is ended as Go ends it")
		_, err = os.Stat(filepath.Join(root, jobstore.LiveDir, dir.ID()))
		assert.NoError(t, err, "the job is in the live index again")
	}
}

// TestPython_KilledRetrierDoesNotBlockGo: a Python retry killed while it
// holds its claim (.run-2 made, nothing written) leaves job.lock naming
// it, as a Go claimant's would; Go's Retry on the same host judges it gone
// by its pid at once, and retries the job.
func TestPython_KilledRetrierDoesNotBlockGo(t *testing.T) {
	dir := failedJob(t, filepath.Join(tempDir(t), "jobs"), "j1")
	s := startPython(t, `
import sys, time, jobstore
def stuck(*args):
    print("claimed", flush=True)
    time.sleep(3600)
jobstore._reread_status = stuck
jobstore.retry(sys.argv[1])
`, string(dir))
	require.Equal(t, "claimed", s.line(t))
	require.NoError(t, s.cmd.Process.Kill())
	_ = s.cmd.Wait()
	_, err := os.Stat(filepath.Join(string(dir), ".run-2"))
	require.NoError(t, err, "the killed retrier's claim is left")

	require.NoError(t, jobstore.Retry(dir), "a claimant that is gone is passed, not waited for")
	st, err := jobstore.ReadStatus(dir)
	require.NoError(t, err)
	assert.Equal(t, jobstore.Queued, st.State)
	assert.Equal(t, uint64(3), st.Attempt, "attempt 2 was the dead claimant's, fenced")
}
