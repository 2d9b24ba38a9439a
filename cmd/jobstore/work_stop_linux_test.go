package main

import (
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/supervise"
	"github.com/axqua/jobstore/internal/testdir"
	"github.com/stretchr/testify/require"
)

// stopOrder orders the processes of a running worker for a stop of its
// whole control group: the worker, the job's supervisor, the command, and
// the rest of the command's tree.
type stopOrder func(worker, sup, cmd int, rest []int) []int

// A service manager that stops the worker's service signals every process
// of it at once (systemd's KillMode=control-group: the worker, the job's
// supervisor, the command and what it started), in no set order. The job
// is queued again, its attempt kept as interrupted, whatever the order:
// never recorded failed "killed by signal SIGTERM", which would count
// against its attempts (one by default: lost for good). The worker ends by
// the signal.
func TestWork_StopOfTheWholeControlGroupQueuesTheJobAgain(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("random orders from seed %d", seed)
	rnd := rand.New(rand.NewPCG(seed, seed))
	for _, tc := range []struct {
		name  string
		order stopOrder
	}{
		{"worker first", func(w, s, c int, rest []int) []int { return append([]int{w, s, c}, rest...) }},
		{"supervisor first", func(w, s, c int, rest []int) []int { return append([]int{s, c, w}, rest...) }},
		{"command first", func(w, s, c int, rest []int) []int { return append(append([]int{c}, rest...), s, w) }},
		{"command, then worker, supervisor last", func(w, s, c int, rest []int) []int { return append(append([]int{c}, rest...), w, s) }},
		{"random", func(w, s, c int, rest []int) []int {
			all := append([]int{w, s, c}, rest...)
			rnd.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
			return all
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := testdir.New(t)
			dir := submitKind(t, root, "j", "k", "")
			j := newTreeJob(t, treeHold, false)
			w, _ := j.start(t, root)
			cmd := readPID(t, j.cmdFile)
			sup := supervisorOf(t, w)
			var rest []int
			for _, pid := range supervise.Descendants(sup) {
				if pid != cmd {
					rest = append(rest, pid)
				}
			}
			order := tc.order(w.cmd.Process.Pid, sup, cmd, rest)
			t.Logf("SIGTERM to %v (worker %d, supervisor %d, command %d)", order, w.cmd.Process.Pid, sup, cmd)
			for _, pid := range order {
				_ = syscall.Kill(pid, syscall.SIGTERM)
			}

			r := w.wait(t)
			requireEndedBy(t, w.cmd, syscall.SIGTERM)
			st := status(t, dir)
			require.Equal(t, jobstore.Queued, st.State, "the stop of the service ended the job:\n%s\n%s", r.stdout, r.stderr)
			require.Contains(t, st.Message, "interrupted")
			require.Contains(t, r.stdout, " queued exit ", "the end line says the job is queued again")
			j.requireStill(t)
		})
	}
}
