package jobstore_test

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/require"
)

// twoHostCancellerRole waits for a line on stdin, then calls RequestCancel
// on each job of $JOBS (space-separated dirs), printing "err <id> ..." for
// a failure, then "done".
const twoHostCancellerRole = "twohost-canceller"

// twoHostStartWaitRole is twoHostStarterRole (lease $LEASE) that first
// waits for a line on stdin, and prints "refused <id>" for a Start that failed with
// ErrCancelRequested.
const twoHostStartWaitRole = "twohost-startwait"

func init() {
	roles[twoHostCancellerRole] = func() int {
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
		for _, d := range strings.Fields(os.Getenv("JOBS")) {
			if err := jobstore.RequestCancel(jobstore.JobDir(d), jobstore.CancelRequest{RequestedBy: "host B"}); err != nil {
				fmt.Println("err", filepath.Base(d), strings.ReplaceAll(err.Error(), "\n", " "))
			}
		}
		fmt.Println("done")
		return 0
	}
	roles[twoHostStartWaitRole] = func() int {
		in := bufio.NewReader(os.Stdin)
		_, _ = in.ReadString('\n')
		var runs []*jobstore.Run
		for _, d := range strings.Fields(os.Getenv("JOBS")) {
			r, err := jobstore.Start(jobstore.JobDir(d), jobstore.WithLease(childLease()))
			switch {
			case err == nil:
				runs = append(runs, r)
				fmt.Println("won", filepath.Base(d))
			case errors.Is(err, jobstore.ErrCancelRequested):
				fmt.Println("refused", filepath.Base(d))
			default:
				fmt.Println("err", filepath.Base(d), strings.ReplaceAll(err.Error(), "\n", " "))
			}
		}
		fmt.Println("done")
		_, _ = in.ReadString('\n')
		for _, r := range runs {
			_ = r.Close()
		}
		return 0
	}
}

// A starter through mount A races RequestCancel through mount B on the same
// queued jobs: each job either runs (its status running, the request left to
// its runner) or ends cancelled with Start refused, never both, and a
// cancelled record is never replaced. Where job.lock does not reach across,
// the attempt claim decides.
func TestTwoHosts_CancelRacesStartOnAQueuedJob(t *testing.T) {
	forEachTwoHosts(t, func(t *testing.T, h *twoHosts) {
		ids := submitQueued(t, h.A, "c", 40)
		stop := make(chan struct{})
		for _, id := range ids {
			wg := watchSeq(t, jobstore.JobDir(filepath.Join(h.B, id)), stop)
			t.Cleanup(wg.Wait)
		}
		t.Cleanup(func() { close(stop) }) // runs before the waits
		starter := startRole(t, twoHostStartWaitRole, jobstore.HostEnv+"=hostA", "JOBS="+pathsUnder(h.A, ids), leaseEnv+"="+h.Lease.String())
		canceller := startRole(t, twoHostCancellerRole, jobstore.HostEnv+"=hostB", "JOBS="+pathsUnder(h.B, ids))
		for _, k := range []*child{starter, canceller} {
			_, err := k.stdin.Write([]byte("go\n"))
			require.NoError(t, err)
		}
		started := map[string]bool{}
		for line := starter.line(t); line != "done"; line = starter.line(t) {
			switch verb, id, _ := strings.Cut(line, " "); verb {
			case "won":
				started[id] = true
			case "refused":
			default:
				t.Errorf("starter: %s", line)
			}
		}
		for line := canceller.line(t); line != "done"; line = canceller.line(t) {
			t.Errorf("canceller: %s", line)
		}
		for _, id := range ids {
			st, err := jobstore.ReadStatus(jobstore.JobDir(filepath.Join(h.Server, id)))
			require.NoError(t, err)
			want := jobstore.Cancelled
			if started[id] {
				want = jobstore.Running
			}
			if st.State != want || st.Seq != 2 || st.Attempt != 1 {
				t.Errorf("job %s (started %v): status %s seq %d attempt %d, want %s seq 2 attempt 1", id, started[id], st.State, st.Seq, st.Attempt, want)
			}
		}
		t.Logf("%d of %d jobs started before the request, the others cancelled", len(started), len(ids))
		require.NoError(t, starter.stdin.Close())
	})
}
