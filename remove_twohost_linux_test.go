package jobstore_test

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/axqua/jobstore"
)

// twoHostStartFinishRole waits for a line on stdin, then Starts each job of
// $JOBS in turn (lease $LEASE): a job it wins it finishes (succeeded) and closes at once
// if its index is even ("finished <id>"), else holds running ("won <id>");
// a Start that fails prints "lost <id> <kind>". Then "done". On the next
// line it writes a progress and finishes each held run ("ok <id>", or
// "bad <id> <error>"), then "checked", and exits when stdin closes.
const twoHostStartFinishRole = "twohost-startfinish"

// twoHostRemoverRole waits for a line on stdin, then, until stdin closes,
// removes the finished jobs through one mount: with $MODE "remove" by
// Remove on each job of $JOBS, with "prune" by Prune($ROOT, 0); it prints
// "removed <id>" for each job removed and "err <id> <error>" for a failure
// that is not a refusal (a job not finished, busy, or gone), then "done".
const twoHostRemoverRole = "twohost-remover"

func init() {
	roles[twoHostStartFinishRole] = twoHostStartFinish
	roles[twoHostRemoverRole] = twoHostRemover
}

func twoHostStartFinish() int {
	in := bufio.NewReader(os.Stdin)
	_, _ = in.ReadString('\n')
	held := map[string]*jobstore.Run{}
	for i, d := range strings.Fields(os.Getenv("JOBS")) {
		id := filepath.Base(d)
		r, err := jobstore.Start(jobstore.JobDir(d), jobstore.WithLease(childLease()))
		switch {
		case err != nil:
			fmt.Println("lost", id, jobstore.ErrorCode(err))
		case i%2 == 0:
			if err := errors.Join(r.Finish(jobstore.Outcome{State: jobstore.Succeeded}), r.Close()); err != nil {
				fmt.Println("bad", id, oneLineErr(err))
				continue
			}
			fmt.Println("finished", id)
		default:
			held[id] = r
			fmt.Println("won", id)
		}
	}
	fmt.Println("done")
	_, _ = in.ReadString('\n')
	for id, r := range held {
		err := r.Progress(0.5, "still mine")
		if err == nil {
			err = r.Flush()
		}
		if err == nil {
			err = r.Finish(jobstore.Outcome{State: jobstore.Succeeded})
		}
		if err = errors.Join(err, r.Close()); err != nil {
			fmt.Println("bad", id, oneLineErr(err))
		} else {
			fmt.Println("ok", id)
		}
	}
	fmt.Println("checked")
	_, _ = in.ReadString('\n')
	return 0
}

func twoHostRemover() int {
	in := bufio.NewReader(os.Stdin)
	_, _ = in.ReadString('\n')
	stop := make(chan struct{})
	go func() { _, _ = in.ReadString('\n'); close(stop) }()
	refusal := func(err error) bool {
		return errors.Is(err, jobstore.ErrWrongState) || errors.Is(err, jobstore.ErrLocked) || errors.Is(err, jobstore.ErrNotJob)
	}
	jobs := strings.Fields(os.Getenv("JOBS"))
	removed := map[string]bool{}
	for {
		select {
		case <-stop:
			fmt.Println("done")
			return 0
		default:
		}
		if os.Getenv("MODE") == "prune" {
			dirs, err := jobstore.Prune(os.Getenv("ROOT"), 0)
			for _, d := range dirs {
				fmt.Println("removed", d.ID())
			}
			var e *jobstore.Error
			if errors.As(err, &e) {
				if joined, ok := e.Err.(interface{ Unwrap() []error }); ok {
					for _, je := range joined.Unwrap() {
						if !refusal(je) {
							fmt.Println("err", filepath.Base(errPathOf(je)), oneLineErr(je))
						}
					}
				} else {
					fmt.Println("err root", oneLineErr(err))
				}
			}
			continue
		}
		for _, d := range jobs {
			if removed[d] {
				continue
			}
			switch err := jobstore.Remove(jobstore.JobDir(d)); {
			case err == nil:
				removed[d] = true
				fmt.Println("removed", filepath.Base(d))
			case !refusal(err):
				fmt.Println("err", filepath.Base(d), oneLineErr(err))
			}
		}
	}
}

func oneLineErr(err error) string { return strings.ReplaceAll(err.Error(), "\n", " ") }

func errPathOf(err error) string {
	var e *jobstore.Error
	if errors.As(err, &e) {
		return e.Path
	}
	return ""
}

// Removers race a starter and a canceller on the same jobs through the two
// mounts of each filesystem of the kit. A starter on host A starts
// each queued job, finishing half of those it wins at once and holding the
// others running; a canceller on host B cancels every job; a remover on
// host B removes every finished job it finds, by Remove job after job, or
// by Prune. No job is both started and removed: a run the starter holds
// keeps working to its end, its job never removed; a job removed was
// finished first, by the starter or by the canceller; a removed job leaves
// nothing behind, not even a hidden directory.
func TestTwoHosts_RemoveAndPruneRaceStart(t *testing.T) {
	forEachTwoHosts(t, func(t *testing.T, kit *twoHosts) {
		for _, mode := range []string{"remove", "prune"} {
			t.Run(mode, func(t *testing.T) {
				// Each mode has a root of its own on the kit's mounts.
				require.NoError(t, os.Mkdir(filepath.Join(kit.A, mode), 0o755))
				h := &twoHosts{A: filepath.Join(kit.A, mode), B: filepath.Join(kit.B, mode), Server: filepath.Join(kit.Server, mode)}
				ids := submitQueued(t, h.A, "r", 40)
				backwards := slices.Clone(ids)
				slices.Reverse(backwards) // the canceller meets the starter halfway
				starter := startRole(t, twoHostStartFinishRole, jobstore.HostEnv+"=hostA", "JOBS="+pathsUnder(h.A, ids), leaseEnv+"="+kit.Lease.String())
				canceller := startRole(t, twoHostCancellerRole, jobstore.HostEnv+"=hostB", "JOBS="+pathsUnder(h.B, backwards))
				remover := startRole(t, twoHostRemoverRole, jobstore.HostEnv+"=hostB", "JOBS="+pathsUnder(h.B, ids), "MODE="+mode, "ROOT="+h.B)
				removedCh := make(chan map[string]bool, 1)
				go func() {
					removed := map[string]bool{}
					for line := remover.line(t); line != "done"; line = remover.line(t) {
						verb, id, _ := strings.Cut(line, " ")
						if verb != "removed" {
							t.Errorf("remover: %s", line)
							continue
						}
						if removed[id] {
							t.Errorf("remover: %s removed twice", id)
						}
						removed[id] = true
					}
					removedCh <- removed
				}()
				for _, k := range []*child{remover, starter, canceller} {
					_, err := k.stdin.Write([]byte("go\n"))
					require.NoError(t, err)
				}

				held, finished := map[string]bool{}, map[string]bool{}
				for line := starter.line(t); line != "done"; line = starter.line(t) {
					switch verb, rest, _ := strings.Cut(line, " "); verb {
					case "won":
						held[rest] = true
					case "finished":
						finished[rest] = true
					case "lost":
					default:
						t.Errorf("starter: %s", line)
					}
				}
				cancelFailed := map[string]bool{}
				for line := canceller.line(t); line != "done"; line = canceller.line(t) {
					_, rest, _ := strings.Cut(line, " ")
					id, _, _ := strings.Cut(rest, " ")
					cancelFailed[id] = true // the job ended first (ErrWrongState) or was gone (ErrNotJob)
				}

				// Every job is now running (held) or finished: the remover takes
				// the finished ones; wait for it, a hang guard only.
				for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(20 * time.Millisecond) {
					left := slices.DeleteFunc(names(t, h.Server), func(n string) bool { return n == jobstore.IndexFile })
					if len(left) <= len(held) { // fewer: a held job was removed, which the checks below report
						break
					}
					require.True(t, time.Now().Before(deadline), "the remover never removed the finished jobs: %v left, %d held", left, len(held))
				}
				require.NoError(t, remover.stdin.Close())
				removed := <-removedCh

				_, err := starter.stdin.Write([]byte("check\n"))
				require.NoError(t, err)
				for line := starter.line(t); line != "checked"; line = starter.line(t) {
					if verb, _, _ := strings.Cut(line, " "); verb != "ok" {
						t.Errorf("a run the starter held could not go on to its end: %s", line)
					}
				}
				for _, id := range ids {
					switch {
					case held[id]:
						require.False(t, removed[id], "job %s was started and removed", id)
						require.Equal(t, jobstore.Succeeded, readStatus(t, jobstore.JobDir(filepath.Join(h.Server, id))).State)
					case removed[id]:
						require.True(t, finished[id] || !cancelFailed[id],
							"job %s was removed without being finished: neither the starter finished it nor the canceller cancelled it", id)
					default:
						t.Errorf("job %s was neither held nor removed", id)
					}
				}
				require.ElementsMatch(t, keys(held), names(t, h.Server), "a removed job leaves nothing behind, not even a hidden directory")
				t.Logf("%d jobs: %d held running, %d started and finished, %d cancelled, %d removed", len(ids), len(held), len(finished), len(ids)-len(held)-len(finished), len(removed))
				require.NoError(t, starter.stdin.Close())
			})
		}
	})
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
