package main

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/clitest"
	"github.com/axqua/jobstore/cmd/jobstore/internal/jobview"
	"github.com/axqua/jobstore/internal/testdir"
	"github.com/stretchr/testify/require"
)

// submitCLI submits a job of kind k under root with "jobstore submit" and
// flags, and returns its directory.
func submitCLI(t *testing.T, root string, flags ...string) jobstore.JobDir {
	t.Helper()
	r := runCLI(t, append([]string{"submit", root, "--kind", "k"}, flags...)...)
	requireCode(t, r, exitOK)
	return jobstore.JobDir(filepath.Join(root, strings.TrimSpace(r.stdout)))
}

// A failed attempt of a job submitted with --max-attempts 2 is queued
// again, and the worker runs it again once its backoff has passed: the
// job ends succeeded, and show lists both attempts.
func TestWork_RetriesAFailedAttemptAfterItsBackoff(t *testing.T) {
	root := testdir.New(t)
	dir := submitCLI(t, root, "--max-attempts", "2", "--backoff", "100ms")
	w := startWorker(t, "flaky", nil, root)
	st := waitEnded(t, dir)
	require.Equal(t, jobstore.Succeeded, st.State, "%s\n%s", w.stdout.String(), w.stderr.String())
	require.Len(t, st.Attempts, 2)
	require.Equal(t, jobstore.Failed, st.Attempts[0].State)
	require.Equal(t, 3, *st.Attempts[0].ExitCode)
	require.False(t, st.Attempts[1].StartedAt.Before(st.Attempts[0].EndedAt.Add(50e6)), "the retry started before half its backoff")

	clitest.WaitUntil(t, "the worker's end line", func() bool { return strings.Contains(w.stdout.String(), "succeeded exit 0") })
	out := w.stdout.String()
	require.Regexp(t, `end   `+dir.ID()+` queued exit 3 after [^:]+: attempt 1 failed \(the command exited with status 3\); retry 2 of 2 at `, out)
	require.Regexp(t, `end   `+dir.ID()+` succeeded exit 0`, out)

	r := runCLI(t, "show", string(dir))
	requireCode(t, r, exitOK)
	require.Regexp(t, `(?m)^state\s+succeeded, attempt 2/2$`, r.stdout)
	require.Regexp(t, `(?m)^schedule\s+max 2 attempts, backoff 100ms doubling up to 10m0s$`, r.stdout)
	require.Regexp(t, `(?m)^attempt 1\s+failed, exit 3, on .+ \(ran .+\): the command exited with status 3$`, r.stdout)
	require.Regexp(t, `(?m)^attempt 2\s+succeeded, exit 0, on `, r.stdout)
	r = runCLI(t, "list", root)
	require.Regexp(t, regexp.QuoteMeta(dir.ID())+`\s+k\s+succeeded, attempt 2/2\s`, r.stdout)

	// --json gives the new fields as the records hold them.
	var shown struct {
		Spec struct {
			MaxAttempts int   `json:"max_attempts"`
			BackoffMS   int64 `json:"backoff_ms"`
		} `json:"spec"`
		Status struct {
			Attempts []map[string]any `json:"attempts"`
		} `json:"status"`
	}
	r = runCLI(t, "show", string(dir), "--json")
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &shown))
	require.Equal(t, 2, shown.Spec.MaxAttempts)
	require.EqualValues(t, 100, shown.Spec.BackoffMS)
	require.Len(t, shown.Status.Attempts, 2)
	require.Equal(t, "failed", shown.Status.Attempts[0]["state"])
	require.EqualValues(t, 3, shown.Status.Attempts[0]["exit_code"])
	var listed struct {
		Jobs []struct {
			Status struct {
				Attempts []any `json:"attempts"`
			} `json:"status"`
		} `json:"jobs"`
	}
	r = runCLI(t, "list", root, "--json")
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &listed))
	require.Len(t, listed.Jobs, 1)
	require.Len(t, listed.Jobs[0].Status.Attempts, 2)
}

// A job's --timeout stops its command as a cancel does, and the attempt
// fails "timed out", which is retried while attempts remain.
func TestWork_TimeoutStopsTheCommandAndTheAttemptIsRetried(t *testing.T) {
	root := testdir.New(t)
	dir := submitCLI(t, root, "--timeout", "300ms", "--max-attempts", "2", "--backoff", "50ms")
	w := startWorker(t, "hold", nil, root, "--grace", "1s")
	st := waitEnded(t, dir)
	require.Equal(t, jobstore.Failed, st.State, "%s\n%s", w.stdout.String(), w.stderr.String())
	require.Len(t, st.Attempts, 2, "the attempt that timed out was retried once")
	for _, a := range st.Attempts {
		require.Equal(t, jobstore.Failed, a.State)
		require.Contains(t, a.Error, "timed out: the attempt ran for its whole timeout of 300ms")
		require.NotNil(t, a.ExitCode, "the command ran, and was stopped")
		if runtime.GOOS != "windows" {
			require.Contains(t, a.Error, "SIGTERM sent to the command")
		}
	}
	require.Contains(t, st.Remedy, "timeout")
	r := runCLI(t, "show", string(dir))
	require.Regexp(t, `(?m)^state\s+failed, attempt 2/2$`, r.stdout)
	require.Contains(t, r.stdout, "timeout 300ms")
}

// "jobstore retry" gives a failed job one more attempt, which the next
// "work --until-empty" runs; a job that cannot be retried is refused in
// the command line's words, and nothing is written.
func TestRetry_AFailedJobRunsAgain(t *testing.T) {
	root := testdir.New(t)
	dir := submitCLI(t, root)
	r := runCLI(t, "retry", string(dir))
	requireCode(t, r, exitUnsuccessful)
	require.Contains(t, r.stderr, "is queued already: it has yet to run")

	requireCode(t, runWorker(t, "flaky", nil, root, "--until-empty"), exitUnsuccessful)
	require.Equal(t, jobstore.Failed, status(t, dir).State, "one attempt: failed for good")
	r = runCLI(t, "list", root)
	require.Regexp(t, regexp.QuoteMeta(dir.ID())+`\s+k\s+failed\s`, r.stdout, "a job of one attempt says no attempt count")

	r = runCLI(t, "retry", string(dir))
	requireCode(t, r, exitOK)
	require.Equal(t, "job "+dir.ID()+" is queued again after attempt 1 (failed); a worker runs it next\n", r.stdout)
	r = runCLI(t, "list", root)
	require.Regexp(t, regexp.QuoteMeta(dir.ID())+`\s+k\s+queued, attempt 2/2, retried by hand\s`, r.stdout, "a retry by hand gives the job one more attempt")

	w := runWorker(t, "flaky", nil, root, "--until-empty")
	requireCode(t, w, exitOK)
	st := status(t, dir)
	require.Equal(t, jobstore.Succeeded, st.State)
	require.Len(t, st.Attempts, 2)
	r = runCLI(t, "list", root)
	require.Regexp(t, regexp.QuoteMeta(dir.ID())+`\s+k\s+succeeded, attempt 2/2, retried by hand\s`, r.stdout)
	r = runCLI(t, "show", string(dir))
	require.Regexp(t, `(?m)^state\s+succeeded, attempt 2/2, retried by hand$`, r.stdout)
	require.Regexp(t, `(?m)^attempt 1\s+failed`, r.stdout)
	require.Regexp(t, `(?m)^attempt 2\s+succeeded`, r.stdout)
	require.NotRegexp(t, `(?m)^attempt 3`, r.stdout, "the retry's claim is no attempt")

	seq := st.Seq
	r = runCLI(t, "retry", string(dir))
	requireCode(t, r, exitUnsuccessful)
	require.Contains(t, r.stderr, "succeeded: nothing to retry")
	require.Contains(t, r.stderr, "Remedy: submit a new job")
	require.Equal(t, seq, status(t, dir).Seq, "a refused retry writes nothing")
}

func TestRetry_ArgumentsAndWhatIsNotAJob(t *testing.T) {
	root := testdir.New(t)
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no dir", []string{"retry"}, exitUsage, "missing DIR"},
		{"two dirs", []string{"retry", root, root}, exitUsage, "unexpected argument"},
		{"not a job", []string{"retry", filepath.Join(root, "nope")}, exitRuntime, "no such directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runCLI(t, tc.args...)
			requireCode(t, r, tc.code)
			requireErrorLine(t, r)
			require.Contains(t, r.stderr, tc.want)
		})
	}
}

// --until-empty runs what is due, leaves a job not yet due queued, and
// exits 0 when every job it ran succeeded.
func TestWork_UntilEmptyLeavesAJobNotYetDue(t *testing.T) {
	root := testdir.New(t)
	now := submitCLI(t, root, "--priority", "1")
	later := submitCLI(t, root, "--not-before", "+1h", "--priority", "9")
	r := runWorker(t, "echo", nil, root, "--until-empty")
	requireCode(t, r, exitOK)
	require.Equal(t, jobstore.Succeeded, status(t, now).State)
	st := status(t, later)
	require.Equal(t, jobstore.Queued, st.State, "a job not yet due is not waited for")
	require.NotContains(t, r.stdout, later.ID())
}

// A pending retry: list says when it is due, --until-empty leaves it
// queued (it did not succeed: exit 1), and retry refuses it, saying when.
func TestRetry_RefusesAJobWhoseRetryIsPending(t *testing.T) {
	root := testdir.New(t)
	dir := submitCLI(t, root, "--max-attempts", "2", "--backoff", "1h")
	w := runWorker(t, "flaky", nil, root, "--until-empty", "--json")
	requireCode(t, w, exitUnsuccessful)
	st := status(t, dir)
	require.Equal(t, jobstore.Queued, st.State)
	require.NotNil(t, st.RetryAt)
	due := jobview.FmtTime(*st.RetryAt)
	ends := jsonLines(t, w.stdout)
	require.Len(t, ends, 2)
	require.Equal(t, "queued", ends[1]["state"])
	require.Equal(t, due, ends[1]["retry_at"])

	r := runCLI(t, "list", root)
	require.Regexp(t, regexp.QuoteMeta(dir.ID())+`\s+k\s+queued, retrying in ([0-9]+m|1h), attempt 2/2\s`, r.stdout)
	r = runCLI(t, "show", string(dir))
	require.Regexp(t, `(?m)^retry at\s+`+regexp.QuoteMeta(due)+` \(in .+\)$`, r.stdout)
	r = runCLI(t, "retry", string(dir))
	requireCode(t, r, exitUnsuccessful)
	require.Contains(t, r.stderr, "is queued already: a retry is due at "+due)
	require.Equal(t, st.Seq, status(t, dir).Seq, "a refused retry writes nothing")
}

// --until-empty looks again when a command ends: a job submitted while
// one ran is run too, though a free slot had found nothing.
func TestWork_UntilEmptyRunsAJobSubmittedWhileOneRan(t *testing.T) {
	root := testdir.New(t)
	submitKind(t, root, "parent", "k", "")
	r := runWorker(t, "spawn", nil, root, "--until-empty", "--parallel", "2")
	requireCode(t, r, exitOK)
	st := status(t, jobstore.JobDir(filepath.Join(root, "spawned")))
	require.Equal(t, jobstore.Succeeded, st.State, "%s\n%s", r.stdout, r.stderr)
}
