package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/clitest"
	"github.com/axqua/jobstore/internal/testdir"
	"github.com/stretchr/testify/require"
)

func TestWait_ExitCodeSaysHowTheJobEnded(t *testing.T) {
	root := testdir.New(t)
	for _, tc := range []struct {
		state jobstore.State
		code  int
	}{
		{jobstore.Succeeded, exitOK},
		{jobstore.Failed, exitUnsuccessful},
		{jobstore.Cancelled, exitCancelled},
		{jobstore.Lost, exitLost},
	} {
		t.Run(string(tc.state), func(t *testing.T) {
			dir := clitest.Submit(t, root, string(tc.state))
			run, err := jobstore.Start(dir)
			require.NoError(t, err)
			if tc.state == jobstore.Lost {
				require.NoError(t, run.Close())
				_, err := jobstore.Reconcile(dir)
				require.NoError(t, err)
			} else {
				require.NoError(t, run.Finish(jobstore.Outcome{State: tc.state, ExitCode: intPtr(7), Message: "done"}))
				require.NoError(t, run.Close())
			}
			r := runCLI(t, "wait", string(dir))
			requireCode(t, r, tc.code)
			require.Empty(t, r.stderr)
			require.Contains(t, r.stdout, "job "+string(tc.state)+" "+string(tc.state))

			r = runCLI(t, "wait", string(dir), "--json")
			requireCode(t, r, tc.code)
			var got map[string]json.RawMessage
			require.NoError(t, json.Unmarshal([]byte(r.stdout), &got))
			require.ElementsMatch(t, []string{"job_id", "dir", "status", "message"}, rawKeys(got))
			var st jobstore.JobStatus
			require.NoError(t, json.Unmarshal(got["status"], &st))
			require.Equal(t, tc.state, st.State)
		})
	}
}

func rawKeys(m map[string]json.RawMessage) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

// Waiting for a running job: the line comes when the runner finishes.
func TestWait_ReturnsWhenTheRunnerFinishes(t *testing.T) {
	root := testdir.New(t)
	dir := clitest.Submit(t, root, "j")
	run, err := jobstore.Start(dir)
	require.NoError(t, err)
	defer run.Close()
	w := startBackground(t, nil, "wait", string(dir))
	time.Sleep(100 * time.Millisecond) // usually waiting by now; passes either way
	require.NoError(t, run.Finish(jobstore.Outcome{State: jobstore.Failed, Error: "bad input", Remedy: "fix it"}))
	r := w.wait(t)
	requireCode(t, r, exitUnsuccessful)
	require.Contains(t, r.stdout, "job j failed")
	require.Contains(t, r.stdout, "bad input. Remedy: fix it")
}

func TestWait_TimeoutAndErrors(t *testing.T) {
	root := testdir.New(t)
	dir := clitest.Submit(t, root, "j")
	r := runCLI(t, "wait", string(dir), "--timeout", "50ms")
	requireCode(t, r, exitTimeout)
	require.Contains(t, r.stdout, "job j has not ended after 50ms: it is queued (seq 1)")

	r = runCLI(t, "wait", filepath.Join(root, "nope"))
	requireCode(t, r, exitRuntime)
	requireErrorLine(t, r)

	require.NoError(t, os.WriteFile(dir.StatusPath(), []byte(`{"schema_version": 9, "state": "teleported"}`), 0o644))
	r = runCLI(t, "wait", string(dir))
	requireCode(t, r, exitRuntime)
	requireErrorLine(t, r)
	require.Contains(t, r.stderr, "newer")

	for _, args := range [][]string{{"wait"}, {"wait", string(dir), "--timeout", "-1s"}, {"wait", string(dir), "--interval", "0s"}} {
		r := runCLI(t, args...)
		requireCode(t, r, exitUsage)
		requireErrorLine(t, r)
	}
}

// A wait that can never end in a status ends at once (well before its
// --timeout, exit 3, not 6), saying why and naming the file: a status.json
// that is a FIFO, a directory, or larger than any record.
func TestWait_EndsAtOnceWhenItCanNeverAnswer(t *testing.T) {
	for name, plant := range map[string]func(t *testing.T, path string){
		"FIFO": func(t *testing.T, path string) {
			require.NoError(t, os.Remove(path))
			if err := clitest.Mkfifo(path); err != nil {
				t.Skipf("no FIFOs here: %v", err)
			}
		},
		"directory": func(t *testing.T, path string) {
			require.NoError(t, os.Remove(path))
			require.NoError(t, os.Mkdir(path, 0o755))
		},
		"3 GiB file": func(t *testing.T, path string) {
			require.NoError(t, os.Truncate(path, 3<<30)) // sparse
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := clitest.Submit(t, testdir.New(t), "j")
			plant(t, dir.StatusPath())
			r := runCLI(t, "wait", string(dir), "--timeout", lineTimeout.String())
			requireCode(t, r, exitRuntime)
			requireErrorLine(t, r)
			require.Contains(t, r.stderr, dir.StatusPath()+": ")
			require.Empty(t, r.stdout)
		})
	}
}

// --timeout on a job whose status cannot be read says so, not that it has
// no status.
func TestWait_TimeoutSaysWhyTheStatusCannotBeRead(t *testing.T) {
	dir := clitest.Submit(t, testdir.New(t), "j")
	require.NoError(t, os.WriteFile(dir.StatusPath(), []byte(`{"schema_version": 1, "state": "run`), 0o644))
	r := runCLI(t, "wait", string(dir), "--timeout", "50ms")
	requireCode(t, r, exitTimeout)
	require.Contains(t, r.stdout, "job j has not ended after 50ms: its status cannot be read now: jobstore: read status "+dir.StatusPath())
	require.NotContains(t, r.stdout, "no status yet")
}
