package main

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/clitest"
	"github.com/axqua/jobstore/cmd/jobstore/internal/supervise"
	"github.com/axqua/jobstore/internal/prereq"
	"github.com/axqua/jobstore/internal/testdir"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// workerCgroup is a cgroup v2 of a test's own for a worker to run in;
// maxDescendants 0 forbids the worker any cgroup below it, as where it is
// not root and its cgroup is not delegated. It is removed at cleanup,
// which fails if the worker left a cgroup in it.
func workerCgroup(t *testing.T, maxDescendants string) (fd int) {
	t.Helper()
	if os.Geteuid() != 0 {
		prereq.Skip(t, "root", "not root: the worker cannot be put in a cgroup of the test's own")
	}
	parent, err := supervise.OwnCgroupDir()
	if err != nil {
		prereq.Skip(t, "cgroup2", "no cgroup v2 here ("+err.Error()+"): a job's processes are not put in a cgroup")
	}
	dir, err := os.MkdirTemp(parent, "jobstore-test-")
	if err != nil {
		prereq.Skip(t, "cgroup2", "cannot make a cgroup ("+err.Error()+")")
	}
	if maxDescendants != "" {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "cgroup.max.descendants"), []byte(maxDescendants), 0))
	}
	fd, err = unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = unix.Close(fd)
		supervise.KillCgroup(dir, cliTimeout)
		ents, _ := os.ReadDir(dir)
		var left []string
		for _, e := range ents {
			if e.IsDir() {
				left = append(left, e.Name())
				_ = os.Remove(filepath.Join(dir, e.Name()))
			}
		}
		require.NoError(t, os.Remove(dir))
		require.Empty(t, left, "the worker left its attempts' cgroups")
	})
	return fd
}

// startInCgroup starts "jobstore ARGS" in the cgroup fd.
func startInCgroup(t *testing.T, fd int, env []string, args ...string) *workerProc {
	t.Helper()
	cmd := jobstoreCmd(context.Background(), env, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: fd}
	return startBackgroundCmd(t, cmd)
}

// escapeScript is a job's command that, on its first attempt, starts a
// plain child and one in a session of its own (setsid), each appending to
// the heartbeat file $HB, records their pids in $PIDS and runs until
// killed; on its second it exits 0. Each attempt first notes in $OVERLAP
// every process of the attempt before still running (a zombie has ended).
const escapeScript = `for p in $(cat "$PIDS" 2>/dev/null); do
	s=$(cat /proc/$p/stat 2>/dev/null) && case "${s##*) }" in Z*) ;; *) echo "$p" >> "$OVERLAP";; esac
done
echo start >> "$STARTS"
[ "$(wc -l < "$STARTS")" -gt 1 ] && exit 0
loop='trap "" TERM; while :; do echo beat >> "$HB"; sleep 0.05; done'
sh -c "$loop" &
echo $! > "$PIDS"
setsid sh -c "$loop" &
echo $! >> "$PIDS"
echo $$ >> "$PIDS"
exec sleep 600
`

// A supervisor killed with SIGKILL does not let its job run twice at once:
// the attempt ends (failed, once) only when every process it started is
// gone, a plain child and one in a session of its own alike, so that its
// retry never runs beside them. With a cgroup, all of it is killed; without
// one, the command's group and every process that kept the attempt's mark.
func TestWork_KilledSupervisorsJobIsRetriedOnlyOnceItsProcessesAreGone(t *testing.T) {
	for _, tc := range []struct {
		name, maxDescendants string
		cgroup               bool
	}{
		{"in a cgroup", "", true},
		{"without a cgroup", "0", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fd := workerCgroup(t, tc.maxDescendants)
			root := testdir.New(t)
			dir, err := jobstore.Submit(root, jobstore.JobSpec{ID: "j", Kind: "k", MaxAttempts: 2, Backoff: time.Millisecond})
			require.NoError(t, err)
			work := testdir.New(t)
			f := func(name string) string { return filepath.Join(work, name) }
			require.NoError(t, os.WriteFile(f("job.sh"), []byte(escapeScript), 0o644))
			env := []string{"HB=" + f("heartbeat"), "PIDS=" + f("pids"), "OVERLAP=" + f("overlap"), "STARTS=" + f("starts")}
			w := startInCgroup(t, fd, env, "work", root, "--until-empty", "--", "sh", f("job.sh"))
			clitest.WaitUntil(t, "the first attempt's processes", func() bool { return len(readLines(f("pids"))) == 3 })
			sup := supervisorOf(t, w)
			require.NoError(t, syscall.Kill(sup, syscall.SIGKILL))

			r := w.wait(t)
			if tc.cgroup {
				require.NotContains(t, r.stderr, "without a cgroup of their own")
			} else {
				require.Contains(t, r.stderr, "without a cgroup of their own")
			}
			require.NoFileExists(t, f("overlap"), "the retry started while processes of the first attempt ran:\n%s\n%s", r.stdout, r.stderr)
			for _, pid := range readLines(f("pids")) {
				n, err := strconv.Atoi(pid)
				require.NoError(t, err)
				require.True(t, dead(n), "process %d of the first attempt outlived it", n)
			}
			st := status(t, dir)
			require.Equal(t, jobstore.Succeeded, st.State, "%s\n%s", r.stdout, r.stderr)
			require.Len(t, st.Attempts, 2, "the killed supervisor's attempt counted once, then its retry")
			require.Equal(t, jobstore.Failed, st.Attempts[0].State)
			require.Equal(t, jobstore.Succeeded, st.Attempts[1].State)
			require.Contains(t, st.Attempts[0].Error, "the job's supervisor failed")
			requireFileStill(t, f("heartbeat"), "a process of the first attempt still beats")
		})
	}
}

// supervisorOf is the pid of the job's supervisor of w, a worker running
// one job.
func supervisorOf(t *testing.T, w *workerProc) int {
	t.Helper()
	children := supervise.Children(w.cmd.Process.Pid)
	require.Len(t, children, 1, "the job's supervisor below the worker (pid %d)", w.cmd.Process.Pid)
	return children[0]
}

// dead reports whether pid has ended: gone, or a zombie (an orphan whose
// reaping is up to init, which may take its time).
func dead(pid int) bool { return supervise.Ended(pid) }

// readLines is the lines of path; none if it cannot be read.
func readLines(path string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	return strings.Fields(string(b))
}

// A stopped supervisor (SIGSTOP) does not hold its job: a timeout, a
// cancel and the worker's forced stop each end the attempt within the
// grace and the kill's wait, and so does the command's exit within
// superviseAnswer or two, the command's whole tree killed, the supervisor
// with it.
func TestWork_StoppedSupervisorDoesNotHoldItsJob(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spec  jobstore.JobSpec
		stop  func(t *testing.T, w *workerProc, dir jobstore.JobDir, cmd int)
		state jobstore.State
		says  string
	}{
		{"timeout", jobstore.JobSpec{Timeout: time.Second}, func(*testing.T, *workerProc, jobstore.JobDir, int) {}, jobstore.Failed, "timed out"},
		{"the command's exit", jobstore.JobSpec{}, func(t *testing.T, _ *workerProc, _ jobstore.JobDir, cmd int) {
			require.NoError(t, syscall.Kill(cmd, syscall.SIGKILL))
		}, jobstore.Failed, "ended while its supervisor was stopped (SIGSTOP)"},
		{"cancel", jobstore.JobSpec{}, func(t *testing.T, _ *workerProc, dir jobstore.JobDir, _ int) {
			require.NoError(t, jobstore.RequestCancel(dir, jobstore.CancelRequest{RequestedBy: "tester"}))
		}, jobstore.Cancelled, "cancel requested"},
		{"second interrupt", jobstore.JobSpec{}, func(t *testing.T, w *workerProc, _ jobstore.JobDir, _ int) {
			require.NoError(t, w.cmd.Process.Signal(os.Interrupt))
			clitest.WaitUntil(t, "the worker to take the interrupt", func() bool { return len(w.stderr.String()) > 0 })
			require.NoError(t, w.cmd.Process.Signal(os.Interrupt))
		}, jobstore.Queued, "interrupted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := testdir.New(t)
			spec := tc.spec
			spec.ID, spec.Kind = "j", "k"
			dir, err := jobstore.Submit(root, spec)
			require.NoError(t, err)
			j := newTreeJob(t, treeHold, true)
			w, gc := j.start(t, root, "--grace", "300ms")
			cmd := readPID(t, j.cmdFile)
			sup := supervisorOf(t, w)
			require.NoError(t, syscall.Kill(sup, syscall.SIGSTOP))
			t.Cleanup(func() { _ = syscall.Kill(sup, syscall.SIGKILL) })
			tc.stop(t, w, dir, cmd)

			var st *jobstore.JobStatus
			clitest.WaitUntil(t, "the job to end", func() bool {
				st = status(t, dir)
				return st.State != jobstore.Running
			})
			require.Equal(t, tc.state, st.State, "%s\n%s", w.stdout.String(), w.stderr.String())
			require.Contains(t, st.Error+st.Message, tc.says)
			require.True(t, dead(gc), "the job ended while the grandchild (pid %d) still runs", gc)
			require.True(t, dead(cmd), "the job ended while the command (pid %d) still runs", cmd)
			clitest.WaitUntil(t, "the supervisor to be gone", func() bool { return gone(sup) })
			j.requireStill(t)
		})
	}
}

// chainScript is a fork chain: each hop appends to $HB, starts the next
// (its argument one less) in the background and exits, so that at any
// moment one or two hops live, each for a moment; the last writes $END.
const chainScript = `echo beat >> "$HB"
[ "$1" -gt 0 ] || { echo end > "$END"; exit 0; }
sh "$0" $(($1 - 1)) &
`

// chainHops is how many hops a chain makes: far longer than a job's end
// should take once its command exits.
const chainHops = 20000

// A fork chain that the command leaves behind (each hop forks the next and
// exits) does not keep the job running until it quits, nor end unnoted:
// the job is recorded once the chain is stopped, saying what was stopped.
func TestWork_ForkChainTheCommandLeftIsStopped(t *testing.T) {
	for i := range 3 { // a scan at the command's exit finds the chain some of the time
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			root := testdir.New(t)
			dir := submitKind(t, root, "j", "k", "")
			work := testdir.New(t)
			f := func(name string) string { return filepath.Join(work, name) }
			require.NoError(t, os.WriteFile(f("chain.sh"), []byte(chainScript), 0o644))
			job := `sh "$CHAIN" ` + strconv.Itoa(chainHops) + ` &
while [ ! -s "$HB" ]; do sleep 0.01; done
exit 0
`
			require.NoError(t, os.WriteFile(f("job.sh"), []byte(job), 0o644))
			env := []string{"HB=" + f("heartbeat"), "END=" + f("end"), "CHAIN=" + f("chain.sh")}
			r := startBackground(t, env, "work", root, "--until-empty", "--grace", "300ms", "--", "sh", f("job.sh")).wait(t)
			requireCode(t, r, exitOK)
			st := status(t, dir)
			require.Equal(t, jobstore.Succeeded, st.State)
			require.NoFileExists(t, f("end"), "the job was recorded once the chain had quit by itself")
			require.Regexp(t, `process(es)? the command left running got SIGTERM`, st.Message)
			requireFileStill(t, f("heartbeat"), "the chain still runs")
		})
	}
}
