package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/clitest"
	"github.com/axqua/jobstore/cmd/jobstore/internal/jobview"
	"github.com/axqua/jobstore/internal/testdir"
	"github.com/stretchr/testify/require"
)

// A command's run function does its work from its options, without argv:
// what it writes and the exit code its error gives are the command's.
func TestRunFunctions_WorkFromTheirOptions(t *testing.T) {
	tests := []struct {
		name       string
		run        func(e *env, dir jobstore.JobDir) error
		wantCode   int
		wantStdout string
		wantStderr string
		absent     string // not in stdout ("": no such check)
		check      func(t *testing.T, dir jobstore.JobDir)
	}{
		{"cancel a queued job", func(e *env, dir jobstore.JobDir) error {
			return runCancel(e, cancelOptions{Dir: dir, Reason: "not needed", By: "tester"})
		}, exitOK, "cancel requested for job j", "", "", func(t *testing.T, dir jobstore.JobDir) {
			req, err := jobstore.ReadCancel(dir)
			require.NoError(t, err)
			require.NotNil(t, req)
			require.Equal(t, "not needed", req.Reason)
			require.Equal(t, "tester", req.RequestedBy)
		}},
		{"retry a job that has yet to run", func(e *env, dir jobstore.JobDir) error {
			return runRetry(e, retryOptions{Dir: dir})
		}, exitUnsuccessful, "", "job j is queued already", "", func(t *testing.T, dir jobstore.JobDir) {
			st, err := jobstore.ReadStatus(dir)
			require.NoError(t, err)
			require.Equal(t, jobstore.Queued, st.State)
			require.Zero(t, st.Attempt, "a refused retry changed the status")
		}},
		{"show as JSON", func(e *env, dir jobstore.JobDir) error {
			return runShow(e, showOptions{Dir: string(dir), JSON: true})
		}, exitOK, `"job_id": "j"`, "", "", nil},
		{"wait for a job that failed", func(e *env, dir jobstore.JobDir) error {
			finish(t, dir, jobstore.Failed)
			return runWait(e, waitOptions{Dir: dir, Interval: time.Second})
		}, exitUnsuccessful, "j failed", "", "", nil},
		{"wait, out of time", func(e *env, dir jobstore.JobDir) error {
			return runWait(e, waitOptions{Dir: dir, Timeout: time.Millisecond, Interval: time.Second, JSON: true})
		}, exitTimeout, "has not ended after 1ms: it is queued", "", "", nil},
		{"reconcile as JSON", func(e *env, dir jobstore.JobDir) error {
			return runReconcile(e, reconcileOptions{Root: filepath.Dir(string(dir)), JSON: true})
		}, exitOK, `"marked_lost": false`, "", "", nil},
		{"logs: stderr.log", func(e *env, dir jobstore.JobDir) error {
			require.NoError(t, os.WriteFile(filepath.Join(string(dir), jobview.StderrFile), []byte("to stderr\n"), 0o644))
			return runLogs(e, logsOptions{Dir: string(dir), Stderr: true})
		}, exitOK, "to stderr\n", "", "", nil},
		{"check a root as JSON", func(e *env, dir jobstore.JobDir) error {
			return runCheck(e, checkOptions{Target: filepath.Dir(string(dir)), JSON: true})
		}, exitOK, `"problems": 0`, "", "", nil},
		{"rm a finished job", func(e *env, dir jobstore.JobDir) error {
			finish(t, dir, jobstore.Succeeded)
			return runRm(e, rmOptions{Dirs: []string{string(dir)}})
		}, exitOK, "removed", "", "", func(t *testing.T, dir jobstore.JobDir) {
			require.NoDirExists(t, string(dir))
		}},
		{"prune, dry run", func(e *env, dir jobstore.JobDir) error {
			finish(t, dir, jobstore.Succeeded)
			return runPrune(e, pruneOptions{Root: filepath.Dir(string(dir)), DryRun: true, JSON: true})
		}, exitOK, `"outcome": "would_remove"`, "", "", func(t *testing.T, dir jobstore.JobDir) {
			require.DirExists(t, string(dir))
		}},
		{"list, filtered, as JSON", func(e *env, dir jobstore.JobDir) error {
			clitest.Submit(t, filepath.Dir(string(dir)), "other")
			finish(t, dir, jobstore.Failed)
			return runList(e, listOptions{Root: filepath.Dir(string(dir)), JSON: true, Filter: &jobview.JobFilter{States: []string{"failed"}}})
		}, exitOK, `"job_id": "j"`, "", `"other"`, nil},
		{"watch a job that has succeeded", func(e *env, dir jobstore.JobDir) error {
			finish(t, dir, jobstore.Succeeded)
			return runWatch(e, watchOptions{Dir: string(dir), Interval: time.Second, JSON: true})
		}, exitOK, `"succeeded"`, "", "", nil},
		{"submit with params", func(e *env, dir jobstore.JobDir) error {
			return runSubmit(e, submitOptions{Root: filepath.Dir(string(dir)), Params: `{"n": 1}`,
				Spec: jobstore.JobSpec{ID: "k", Kind: "render", SubmittedBy: "tester"}})
		}, exitOK, "k\n", "", "", func(t *testing.T, dir jobstore.JobDir) {
			spec, err := jobstore.ReadSpec(jobstore.JobDir(filepath.Join(filepath.Dir(string(dir)), "k")))
			require.NoError(t, err)
			require.JSONEq(t, `{"n": 1}`, string(spec.Params))
		}},
		{"completion for bash", func(e *env, _ jobstore.JobDir) error {
			return runCompletion(e, completionOptions{Shell: "bash"})
		}, exitOK, "__start_jobstore", "", "", nil},
		{"completion for a shell it does not know", func(e *env, _ jobstore.JobDir) error {
			return runCompletion(e, completionOptions{Shell: "tcsh"})
		}, exitUsage, "", "", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := clitest.Submit(t, testdir.New(t), "j")
			var stdout, stderr bytes.Buffer
			err := tt.run(&env{stdout: &stdout, stderr: &stderr}, dir)
			require.Equal(t, tt.wantCode, exitStatusOf(err), "error: %v", err)
			require.Contains(t, stdout.String(), tt.wantStdout)
			require.Contains(t, stderr.String(), tt.wantStderr)
			if tt.absent != "" {
				require.NotContains(t, stdout.String(), tt.absent)
			}
			if tt.check != nil {
				tt.check(t, dir)
			}
		})
	}
}

// finish runs the job in dir to state with the runner handle.
func finish(t *testing.T, dir jobstore.JobDir, state jobstore.State) {
	t.Helper()
	run, err := jobstore.Start(dir)
	require.NoError(t, err)
	defer run.Close()
	require.NoError(t, run.Finish(jobstore.Outcome{State: state}))
}
