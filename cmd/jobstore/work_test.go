package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/clitest"
	"github.com/axqua/jobstore/cmd/jobstore/internal/jobview"
	"github.com/axqua/jobstore/internal/testdir"
	"github.com/stretchr/testify/require"
)

// jobRoleEnv makes the test binary a job's command for "jobstore work":
// its value names the behaviour (jobRoles). The worker passes its
// environment on, so the role and its settings are set on the worker.
const jobRoleEnv = "JOBSTORE_WORK_TEST_JOB"

// Settings of the job roles, in the environment.
const (
	ignoreTermEnv = "JOBSTORE_WORK_TEST_IGNORE_TERM" // "1": the command ignores SIGTERM
	grandchildEnv = "JOBSTORE_WORK_TEST_GRANDCHILD"  // "1": the command starts a child that holds on too
)

// Files a job role writes or waits for in its job directory.
const (
	pidFile        = "pid"            // the command's pid, once it runs
	grandchildFile = "grandchild.pid" // its child's pid
	releaseFile    = "release"        // the test creates it to let the command end
)

func runJobRole(role string) int {
	switch role {
	case "echo":
		return echoJob()
	case "hold":
		return holdJob(false)
	case "progress":
		return holdJob(true)
	case "grandchild":
		return grandchildJob()
	case "flaky":
		return flakyJob()
	case "spawn":
		return spawnJob()
	}
	fmt.Fprintf(os.Stderr, "unknown job role %q\n", role)
	return 2
}

// echoJob prints what it was given (its job's ID and directory, and its
// standard input), writes a line to standard error, and ends as its params
// say: {"exit": N} exits N, {"kill": true} kills itself. {"print": S}
// and {"raw": B} (base64: any bytes) print S, then B, as they are on
// standard output first; {"bulk": N} writes N
// numbered lines (bulkLine) to standard output and standard error.
func echoJob() int {
	in, _ := io.ReadAll(os.Stdin)
	fmt.Printf("id=%s dir=%s params=%s", os.Getenv(jobIDEnv), os.Getenv(jobDirEnv), in)
	fmt.Fprintln(os.Stderr, "a line on stderr")
	var p struct {
		Exit  int    `json:"exit"`
		Kill  bool   `json:"kill"`
		Print string `json:"print"`
		Raw   []byte `json:"raw"`
		Bulk  int    `json:"bulk"`
	}
	_ = json.Unmarshal(in, &p)
	os.Stdout.WriteString(p.Print)
	os.Stdout.Write(p.Raw)
	for i := range p.Bulk {
		os.Stdout.WriteString(bulkLine(i))
		os.Stderr.WriteString(bulkLine(i))
	}
	if p.Kill {
		self, _ := os.FindProcess(os.Getpid())
		_ = self.Kill()
		time.Sleep(time.Minute)
	}
	return p.Exit
}

// holdJob records its pid, reports progress if asked, and runs until the
// release file appears; it ignores SIGTERM if told to, and starts a
// grandchild that runs as long if told to.
func holdJob(progress bool) int {
	dir := os.Getenv(jobDirEnv)
	if os.Getenv(ignoreTermEnv) == "1" {
		signal.Ignore(syscall.SIGTERM)
	}
	if os.Getenv(grandchildEnv) == "1" {
		self, _ := os.Executable()
		gc := exec.Command(self)
		gc.Env = append(os.Environ(), jobRoleEnv+"=grandchild")
		if err := gc.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
	}
	if progress {
		fmt.Println("progress 0.25 a quarter")
		fmt.Println("not a progress line")
		fmt.Println("progress 0.5 half way")
	}
	publish(filepath.Join(dir, pidFile), os.Getpid())
	for !jobview.Exists(filepath.Join(dir, releaseFile)) {
		time.Sleep(10 * time.Millisecond)
	}
	return 0
}

// flakyJob fails (exit 3) the first time it runs for a job, and succeeds
// after: it leaves a file in the job directory to know.
func flakyJob() int {
	mark := filepath.Join(os.Getenv(jobDirEnv), "ran-once")
	if jobview.Exists(mark) {
		fmt.Println("second time lucky")
		return 0
	}
	publish(mark, os.Getpid())
	fmt.Fprintln(os.Stderr, "the licence server blinked")
	return 3
}

// spawnDelay is how long the spawn role waits before it submits: enough
// for a worker with a free slot to have looked and found nothing.
const spawnDelay = 300 * time.Millisecond

// spawnJob, run for a job other than "spawned", waits spawnDelay, then
// submits a job "spawned" of kind k into its job's root; it succeeds.
func spawnJob() int {
	if os.Getenv(jobIDEnv) == "spawned" {
		return 0
	}
	time.Sleep(spawnDelay)
	if _, err := jobstore.Submit(filepath.Dir(os.Getenv(jobDirEnv)), jobstore.JobSpec{ID: "spawned", Kind: "k"}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	return 0
}

// bulkLine is the line i of what {"bulk": N} writes.
func bulkLine(i int) string { return fmt.Sprintf("line %07d of the bulk output\n", i) }

// grandchildJob records its pid and runs until killed.
func grandchildJob() int {
	publish(filepath.Join(os.Getenv(jobDirEnv), grandchildFile), os.Getpid())
	time.Sleep(time.Hour)
	return 0
}

// publish writes n to path whole (a temp file renamed into place).
func publish(path string, n int) {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(fmt.Sprint(n)), 0o644); err == nil {
		_ = os.Rename(tmp, path)
	}
}

// workerProc is a jobstore command (a worker) running in the background.
type workerProc struct {
	cmd            *exec.Cmd
	stdout, stderr clitest.SyncBuffer
	done           chan struct{}
	err            error
}

// startWorker starts "jobstore work ARGS -- <this test binary>", with the
// job role and env in its environment.
func startWorker(t *testing.T, role string, env []string, args ...string) *workerProc {
	t.Helper()
	self, err := os.Executable()
	require.NoError(t, err)
	return startBackground(t, append(env, jobRoleEnv+"="+role), append(append([]string{"work"}, args...), "--", self)...)
}

// startBackground starts "jobstore ARGS" with env added; it is killed at
// cleanup if still running.
func startBackground(t *testing.T, env []string, args ...string) *workerProc {
	t.Helper()
	return startBackgroundCmd(t, jobstoreCmd(context.Background(), env, args...))
}

// startBackgroundCmd starts cmd, a jobstore command, as startBackground
// does.
func startBackgroundCmd(t *testing.T, cmd *exec.Cmd) *workerProc {
	t.Helper()
	w := &workerProc{cmd: cmd, done: make(chan struct{})}
	w.cmd.Stdout, w.cmd.Stderr = &w.stdout, &w.stderr
	require.NoError(t, w.cmd.Start())
	go func() {
		w.err = w.cmd.Wait()
		close(w.done)
	}()
	t.Cleanup(func() {
		select {
		case <-w.done:
		default:
			_ = w.cmd.Process.Kill()
			<-w.done
		}
	})
	return w
}

// wait waits for the worker to exit and returns what it did.
func (w *workerProc) wait(t *testing.T) result {
	t.Helper()
	select {
	case <-w.done:
	case <-time.After(cliTimeout):
		t.Fatalf("jobstore work did not exit within %v\nstdout:\n%s\nstderr:\n%s", cliTimeout, w.stdout.String(), w.stderr.String())
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(w.err, &ee) {
		code = ee.ExitCode()
	} else {
		require.NoError(t, w.err)
	}
	return result{w.stdout.String(), w.stderr.String(), code}
}

// runWorker runs "jobstore work" to its end.
func runWorker(t *testing.T, role string, env []string, args ...string) result {
	t.Helper()
	return startWorker(t, role, env, args...).wait(t)
}

// submitKind submits a job of kind with params ("": none) under root.
func submitKind(t *testing.T, root, id, kind string, params string) jobstore.JobDir {
	t.Helper()
	spec := jobstore.JobSpec{ID: id, Kind: kind}
	if params != "" {
		spec.Params = json.RawMessage(params)
	}
	dir, err := jobstore.Submit(root, spec)
	require.NoError(t, err)
	return dir
}

// waitEnded waits for dir's job to end (Wait) and returns its status.
func waitEnded(t *testing.T, dir jobstore.JobDir) *jobstore.JobStatus {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cliTimeout)
	defer cancel()
	st, err := jobstore.Wait(ctx, dir)
	require.NoError(t, err)
	return st
}

func status(t *testing.T, dir jobstore.JobDir) *jobstore.JobStatus {
	t.Helper()
	st, err := jobstore.ReadStatus(dir)
	require.NoError(t, err)
	require.NotNil(t, st)
	return st
}

func readText(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

// jsonLines decodes one JSON object per line.
func jsonLines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var lines []map[string]any
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var m map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m), "not a JSON line: %s", sc.Text())
		lines = append(lines, m)
	}
	return lines
}

func TestWork_RunsEachJobAndRecordsHowItEnded(t *testing.T) {
	root := testdir.New(t)
	ok := submitKind(t, root, "a-ok", "echo", `{"frames": [1, 2], "name": "x<y"}`)
	none := submitKind(t, root, "b-none", "echo", "")
	bad := submitKind(t, root, "c-bad", "echo", `{"exit": 3}`)
	killed := submitKind(t, root, "d-killed", "echo", `{"kill": true}`)
	other := submitKind(t, root, "e-other", "other-kind", "")

	r := runWorker(t, "echo", nil, root, "--until-empty", "--json", "--kind", "echo")
	requireCode(t, r, exitUnsuccessful) // c-bad and d-killed failed

	// Params on stdin, ID and directory in the environment, all the output
	// kept in the job directory.
	abs, err := filepath.Abs(string(ok))
	require.NoError(t, err)
	require.Equal(t, "id=a-ok dir="+abs+` params={"frames":[1,2],"name":"x<y"}`+"\n", commandOutput(t, filepath.Join(string(ok), jobview.StdoutFile)))
	require.Equal(t, "a line on stderr\n", commandOutput(t, filepath.Join(string(ok), jobview.StderrFile)))
	require.Contains(t, readText(t, filepath.Join(string(none), jobview.StdoutFile)), "params=null\n")

	st := status(t, ok)
	require.Equal(t, jobstore.Succeeded, st.State)
	require.Equal(t, 0, *st.ExitCode)
	st = status(t, bad)
	require.Equal(t, jobstore.Failed, st.State)
	require.Equal(t, 3, *st.ExitCode)
	require.Contains(t, st.Error, "exited with status 3")
	require.Contains(t, st.Remedy, jobview.StderrFile)
	st = status(t, killed)
	require.Equal(t, jobstore.Failed, st.State)
	if runtime.GOOS != "windows" {
		require.Equal(t, 128+9, *st.ExitCode, "a signal is recorded as 128 + its number")
		require.Contains(t, st.Error, "killed by signal SIGKILL (9)")
	}
	require.Equal(t, jobstore.Queued, status(t, other).State, "--kind: other kinds are left")

	// One start and one end line per job, every key present.
	lines := jsonLines(t, r.stdout)
	require.Len(t, lines, 8, r.stdout)
	ends := map[string]map[string]any{}
	for i, l := range lines {
		if i%2 == 0 {
			require.Equal(t, "start", l["event"])
			require.ElementsMatch(t, []string{"event", "time", "job_id", "dir", "kind"}, keys(l))
			continue
		}
		require.Equal(t, "end", l["event"])
		require.Equal(t, lines[i-1]["job_id"], l["job_id"], "a job's end follows its start with --parallel 1")
		require.ElementsMatch(t, []string{"event", "time", "job_id", "dir", "state", "retry_at", "exit_code", "signal", "seconds", "message", "error"}, keys(l))
		ends[l["job_id"].(string)] = l
	}
	require.Equal(t, "succeeded", ends["a-ok"]["state"])
	require.Equal(t, "failed", ends["c-bad"]["state"])
	require.EqualValues(t, 3, ends["c-bad"]["exit_code"])
	require.Nil(t, ends["c-bad"]["signal"])
	if runtime.GOOS != "windows" {
		require.Equal(t, "SIGKILL", ends["d-killed"]["signal"])
	}

	// The output files are nobody's business but the user's: check and
	// list see a sound job.
	c := runCLI(t, "check", string(ok))
	requireCode(t, c, exitOK)
	requireNoTemp(t, root)
}

func keys(m map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

// requireNoTemp fails if a jobstore temp file is left under root.
func requireNoTemp(t *testing.T, root string) {
	t.Helper()
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && jobstore.IsTempName(d.Name()) {
			t.Errorf("temp file left: %s", p)
		}
		return nil
	})
}

func TestWork_ProgressLinesReachWatch(t *testing.T) {
	root := testdir.New(t)
	dir := submitKind(t, root, "p", "k", "")
	ctx, cancel := context.WithTimeout(context.Background(), cliTimeout)
	defer cancel()
	updates, err := jobstore.Watch(ctx, dir)
	require.NoError(t, err)
	w := startWorker(t, "progress", nil, root, "--until-empty")
	var seen []string
	for u := range updates {
		if u.Status != nil && u.Status.Progress != nil {
			seen = append(seen, fmt.Sprintf("%.2f %s", *u.Status.Progress, u.Status.Message))
			if *u.Status.Progress == 0.5 {
				break
			}
		}
	}
	require.NotEmpty(t, seen, "no progress reached Watch")
	require.Equal(t, "0.50 half way", seen[len(seen)-1])
	require.NotContains(t, seen, "not a progress line")
	writeFileT(t, filepath.Join(string(dir), releaseFile), "")
	clitest.WaitUntil(t, "the job to end", func() bool { return status(t, dir).State.Terminal() })
	st := status(t, dir)
	require.Equal(t, jobstore.Succeeded, st.State)
	require.Equal(t, 0.5, *st.Progress)
	require.Contains(t, readText(t, filepath.Join(string(dir), jobview.StdoutFile)), "not a progress line\n")
	requireCode(t, w.wait(t), exitOK)
}

func writeFileT(t *testing.T, path, data string) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, []byte(data), 0o644))
}

func readPID(t *testing.T, path string) int {
	t.Helper()
	var pid int
	_, err := fmt.Sscan(readText(t, path), &pid)
	require.NoError(t, err)
	return pid
}

func TestWork_UsageAndSetupErrors(t *testing.T) {
	root := testdir.New(t)
	self, err := os.Executable()
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no command", []string{"work", root}, exitUsage, "missing -- COMMAND"},
		{"empty command", []string{"work", root, "--"}, exitUsage, "missing -- COMMAND"},
		{"no root", []string{"work", "--", "true"}, exitUsage, "missing ROOT"},
		{"parallel 0", []string{"work", root, "--parallel", "0", "--", "x"}, exitUsage, "--parallel must be at least 1"},
		{"grace 0", []string{"work", root, "--grace", "0s", "--", "x"}, exitUsage, "--grace must be positive"},
		{"empty kind", []string{"work", root, "--kind", "", "--", "x"}, exitUsage, "a kind cannot be empty"},
		{"fail-fast negative", []string{"work", root, "--fail-fast", "-1", "--", "x"}, exitUsage, "--fail-fast must be 0 (never) or more"},
		{"fail-fast-within 0", []string{"work", root, "--fail-fast-within", "0s", "--", "x"}, exitUsage, "--fail-fast-within must be positive"},
		{"log-limit too small", []string{"work", root, "--log-limit", "100", "--", "x"}, exitUsage, "--log-limit must be 0 (keep all) or at least 4096"},
		{"log-limit not a size", []string{"work", root, "--log-limit", "12MB", "--", "x"}, exitUsage, `"12MB" is not a size`},
		{"log-limit negative", []string{"work", root, "--log-limit", "-1", "--", "x"}, exitUsage, `"-1" is not a size`},
		{"command not found", []string{"work", root, "--", "no-such-command-anywhere"}, exitRuntime, "cannot run no-such-command-anywhere"},
		{"root missing", []string{"work", filepath.Join(root, "nope"), "--until-empty", "--", self}, exitRuntime, "cannot read the jobs root"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runCLI(t, tc.args...)
			requireCode(t, r, tc.code)
			requireErrorLine(t, r)
			require.Contains(t, r.stderr, tc.want)
		})
	}
}

// What cannot be kept (an output file that is a link) fails the job
// before its command runs, and nothing is written through the link.
func TestWork_OutputFileInTheWayFailsTheJob(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	root := testdir.New(t)
	dir := submitKind(t, root, "j", "k", "")
	target := filepath.Join(testdir.New(t), "elsewhere")
	writeFileT(t, target, "untouched")
	require.NoError(t, os.Symlink(target, filepath.Join(string(dir), jobview.StdoutFile)))
	r := runWorker(t, "echo", nil, root, "--until-empty")
	requireCode(t, r, exitUnsuccessful)
	st := status(t, dir)
	require.Equal(t, jobstore.Failed, st.State)
	require.Contains(t, st.Error, "cannot keep the command's output in "+jobview.StdoutFile)
	require.Nil(t, st.ExitCode, "the command never ran")
	require.Equal(t, "untouched", readText(t, target))
}
