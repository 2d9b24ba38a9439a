//go:build unix

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/clitest"
	"github.com/axqua/jobstore/internal/prereq"
	"github.com/axqua/jobstore/internal/testdir"
	"github.com/stretchr/testify/require"
)

// runningJob is a job under a fresh root, running at 50% (seq 3), whose
// runner holds it until the test ends.
func runningJob(t *testing.T) (root string, dir jobstore.JobDir) {
	t.Helper()
	root = testdir.New(t)
	dir = clitest.Submit(t, root, "j")
	run, err := jobstore.Start(dir, jobstore.WithProgressInterval(0))
	require.NoError(t, err)
	t.Cleanup(func() { _ = run.Close() })
	require.NoError(t, run.Progress(0.5, "halfway"))
	return root, dir
}

// watch and list --watch, stopped by SIGINT (Ctrl-C) or SIGTERM, stop the
// same way: a last line (watch --json: a last event, "stopped") says so and
// what was last seen, nothing goes to stderr, the job is left as it was, and
// the process ends by the signal, as one that does not catch it does.
func TestWatchers_StoppedByASignalSaySoAndEndByIt(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		name := map[syscall.Signal]string{syscall.SIGINT: "SIGINT", syscall.SIGTERM: "SIGTERM"}[sig]
		for _, tc := range []struct {
			command string
			args    func(root string, dir jobstore.JobDir) []string
			check   func(t *testing.T, root, last string)
		}{
			{"watch", func(_ string, dir jobstore.JobDir) []string {
				return []string{"watch", string(dir), "--interval", watchPoll.String()}
			}, func(t *testing.T, _, last string) {
				require.Equal(t, "stopped ("+name+") watching job j: it was running at seq 3, progress 50%; the job goes on", last)
			}},
			{"watch --json", func(_ string, dir jobstore.JobDir) []string {
				return []string{"watch", string(dir), "--interval", watchPoll.String(), "--json"}
			}, func(t *testing.T, _, last string) {
				var ev watchEventJSON
				require.NoError(t, json.Unmarshal([]byte(last), &ev), last)
				require.Equal(t, "stopped", ev.Event)
				require.Equal(t, "j", ev.ID)
				require.NotNil(t, ev.Status, "the last status read")
				require.Equal(t, jobstore.Running, ev.Status.State)
				require.Equal(t, uint64(3), ev.Status.Seq)
				require.Nil(t, ev.Error)
				require.Equal(t, "stopped ("+name+") watching job j: it was running at seq 3, progress 50%; the job goes on", ev.Message)
			}},
			{"list --watch", func(root string, _ jobstore.JobDir) []string {
				return []string{"list", root, "--watch", "--interval", watchPoll.String()}
			}, func(t *testing.T, root, last string) {
				require.Equal(t, "stopped ("+name+") watching "+root, last)
			}},
		} {
			t.Run(tc.command+" "+name, func(t *testing.T) {
				root, dir := runningJob(t)
				w := startLines(t, tc.args(root, dir)...)
				w.waitLine(t, "50%")
				require.NoError(t, w.cmd.Process.Signal(sig))
				_, last := w.wait(t)
				requireEndedBy(t, w.cmd, sig)
				require.Empty(t, w.stderr.String())
				tc.check(t, root, last)
				st, err := jobstore.ReadStatus(dir)
				require.NoError(t, err)
				require.Equal(t, jobstore.Running, st.State, "the job goes on")
				require.Equal(t, uint64(3), st.Seq)
			})
		}
	}
}

// Why a stopped watch does not exit 0: in a script, "jobstore watch DIR &&
// next" must not go on to next when the user presses Ctrl-C (which sends
// SIGINT to the script and the watch alike). bash runs next when the watch
// exits 0, and stops the script when the watch ends by the SIGINT.
func TestWatch_CtrlCInAScriptDoesNotRunWhatFollowsTheWatch(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		prereq.Skip(t, "bash", "no bash here")
	}
	_, dir := runningJob(t)
	ctx, cancel := context.WithTimeout(context.Background(), cliTimeout)
	defer cancel()
	script := `"$0" watch "$1" --interval 20ms && echo next-step-ran; echo "the script went on"`
	cmd := exec.CommandContext(ctx, bash, "-c", script, cli, string(dir))
	cmd.Env = append(os.Environ(), cliEnv...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // a process group, as a terminal's job is
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	lines := bufio.NewScanner(out)
	var seen []string
	for lines.Scan() {
		seen = append(seen, lines.Text())
		if strings.Contains(lines.Text(), "50%") {
			break
		}
	}
	require.NotEmpty(t, seen, "the watch drew nothing")
	require.NoError(t, syscall.Kill(-cmd.Process.Pid, syscall.SIGINT), "Ctrl-C: SIGINT to the whole group")
	for lines.Scan() {
		seen = append(seen, lines.Text())
	}
	_ = cmd.Wait()
	all := strings.Join(seen, "\n")
	require.Contains(t, all, "stopped (SIGINT) watching job j")
	require.NotContains(t, all, "next-step-ran", "the step after the watch ran")
	require.NotContains(t, all, "the script went on", "bash took the watch's SIGINT as handled")
	requireEndedBy(t, cmd, syscall.SIGINT)
}
