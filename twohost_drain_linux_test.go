// Eight Workers on two hosts drain a root that keeps a long history: one
// root seen through two mounts of the kit (twohost_kit_linux_test.go),
// thousands of finished jobs in it, 500 jobs to run, each started exactly
// once.

package jobstore_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/internal/prereq"
	"github.com/stretchr/testify/require"
)

// The drain's sizes.
const (
	drainJobs    = 500 // jobs to run, half submitted before the workers start
	drainWorkers = 8   // Workers, alternately on mounts A and B
)

// drainKits are the filesystems of the kit the drain runs on: bindfs (no
// lock crosses the mounts) and GlusterFS (a distributed filesystem whose
// clients cache for a second).
var drainKits = [...]string{"bindfs", "glusterfs"}

// drainKept is how many finished jobs the root keeps before the drain on
// kit: 20,000 on bindfs, whose backing directory is written directly in
// seconds; 5,000 on GlusterFS, whose client writes about 110 jobs a second
// (20,000 took 3 minutes). What a look costs as the history grows is
// measured to 50,000 jobs by the scale benchmarks (bench_scale_test.go).
func drainKept(kit string) int {
	if kit == "glusterfs" {
		return 5_000
	}
	return 20_000
}

// drainGuard bounds how long the drain test waits for the jobs to end: it
// fails the test instead of hanging it. It is no time limit.
const drainGuard = 10 * time.Minute

// drainPoll is how often the drain test reads the jobs' statuses while
// they run.
const drainPoll = 200 * time.Millisecond

// forTwoHostsKits is forEachTwoHosts for the kits named in names alone;
// body also gets the kit.
func forTwoHostsKits(t *testing.T, names []string, body func(t *testing.T, h *twoHosts, k twoHostsKit)) {
	t.Helper()
	for _, k := range twoHostsKits() {
		if !slices.Contains(names, k.name) {
			continue
		}
		t.Run(k.name, func(t *testing.T) {
			a, b, server := k.mount(t)
			body(t, &twoHosts{A: a, B: b, Server: server, LocksForwarded: k.locksForwarded, Lease: twoHostLeaseFor(k.staleness),
				Staleness: k.staleness}, k)
		})
	}
}

// keptRecords reads the entries and records of every kept job on the
// server: what the drain must not change.
func keptRecords(t *testing.T, server string, kept int) map[string]string {
	t.Helper()
	m := make(map[string]string, kept)
	for i := range kept {
		spec, _ := finishedJob(i)
		dir := filepath.Join(server, spec.ID)
		var rec strings.Builder
		rec.WriteString(strings.Join(names(t, dir), " "))
		for _, f := range []string{jobstore.SpecFile, jobstore.StatusFile} {
			rec.WriteString("\n" + string(readFile(t, filepath.Join(dir, f))))
		}
		m[spec.ID] = rec.String()
	}
	return m
}

// 8 Workers, 4 through each mount as two hosts, drain 500 jobs from a root
// that already keeps thousands of finished ones (drainKept; written
// beforehand, as a root kept for its history is), 250 submitted before
// they start and 250 while they run, through both mounts. Every job ends succeeded, started exactly
// once: its handler (whose log is kept outside the root) began once, for
// the attempt and started_at the record names, and the record keeps that
// attempt's claim. No kept job is touched: their entries and records are
// what they were. The times the fixture and the drain took are logged.
func TestTwoHostDrain_EightWorkersOnTwoMountsStartEachJobOnceBesideAKeptHistory(t *testing.T) {
	prereq.Long(t, "eight workers drain a root on two mounts, about 2 minutes")
	forTwoHostsKits(t, drainKits[:], func(t *testing.T, h *twoHosts, k twoHostsKit) {
		// bindfs's backing directory is a local one, written directly; a
		// GlusterFS brick is only ever changed through a client.
		fixture := h.A
		if k.name == "bindfs" {
			fixture = h.Server
		}
		t0 := time.Now()
		keep := drainKept(k.name)
		require.NoError(t, writeFinishedJobs(fixture, 0, keep))
		kept := keptRecords(t, h.Server, keep)
		built := time.Since(t0)

		log := filepath.Join(tempDir(t), "handlers.log") // outside the root
		ids := make([]string, drainJobs)
		submit := func(i int) {
			ids[i] = fmt.Sprintf("drain-%03d", i)
			mnt := h.A
			if i%2 == 1 {
				mnt = h.B
			}
			_, err := jobstore.Submit(mnt, jobstore.JobSpec{ID: ids[i], Kind: "k"})
			require.NoError(t, err)
		}
		for i := range drainJobs / 2 {
			submit(i)
		}
		t1 := time.Now()
		var kids []*child
		for i := range drainWorkers {
			mnt, host := h.A, "hostA"
			if i%2 == 1 {
				mnt, host = h.B, "hostB"
			}
			kids = append(kids, startKitWorker(t, h, mnt, host, log))
		}
		for i := drainJobs / 2; i < drainJobs; i++ {
			submit(i)
		}

		final := map[string]*jobstore.JobStatus{}
		deadline := time.Now().Add(drainGuard)
		for {
			var open []string
			for _, id := range ids {
				if final[id] != nil {
					continue
				}
				st, err := serverStatus(t, h, id)
				switch {
				case err != nil:
					open = append(open, fmt.Sprintf("%s: %v", id, err))
				case st == nil || !st.State.Terminal():
					open = append(open, fmt.Sprintf("%s: %+v", id, st))
				default:
					final[id] = st
				}
			}
			if len(open) == 0 {
				break
			}
			if time.Now().After(deadline) {
				// The workers are killed at cleanup: one in the middle of a
				// look would not stop before it ends.
				t.Fatalf("%d of %d jobs did not end in %v: %s", len(open), drainJobs, drainGuard, strings.Join(open, "; "))
			}
			time.Sleep(drainPoll)
		}
		drained := time.Since(t1)
		said := stopKitWorkers(t, kids...)

		starts := map[string][]handlerLine{}
		ends := map[string]int{}
		for _, l := range readHandlerLog(t, log) {
			switch l.what {
			case "start":
				starts[l.id] = append(starts[l.id], l)
			case "end":
				ends[l.id]++
				require.Equal(t, "ok", l.result, "%s attempt %d", l.id, l.attempt)
			default:
				t.Fatalf("the handler log has a %s line for %s", l.what, l.id)
			}
		}
		require.Len(t, starts, drainJobs, "jobs whose handler ran: the 500, none of the kept")
		claims := map[int]int{} // jobs by how many attempt directories they hold
		for _, id := range ids {
			st := final[id]
			require.Equal(t, jobstore.Succeeded, st.State, "%s: %+v", id, st)
			s := starts[id]
			if len(s) != 1 {
				var by []string
				for _, l := range s {
					by = append(by, fmt.Sprintf("attempt %d by %s at %s", l.attempt, l.host, l.clock.Format(time.StampMicro)))
				}
				t.Fatalf("%s was started %d times: %s", id, len(s), strings.Join(by, "; "))
			}
			require.Equal(t, 1, ends[id], "%s: its handler ended %d times", id, ends[id])
			require.Equal(t, st.Attempt, s[0].attempt, "%s: the handler ran another attempt than the record's", id)
			require.NotNil(t, st.StartedAt, id)
			require.True(t, st.StartedAt.Equal(s[0].at), "%s: the record's started_at %v, the handler's %v", id, st.StartedAt, s[0].at)
			require.LessOrEqual(t, len(st.Attempts), 1, "%s: one attempt ran: %+v", id, st.Attempts)
			dir := filepath.Join(h.Server, id)
			require.DirExists(t, filepath.Join(dir, fmt.Sprintf(".run-%d", st.Attempt)), "%s: the claim of the attempt that ran", id)
			n := 0
			for _, e := range names(t, dir) {
				if strings.HasPrefix(e, ".run-") || strings.HasPrefix(e, ".fenced-") {
					n++
				}
			}
			claims[n]++
		}
		require.Len(t, said, drainJobs, "the workers' starts: %v", said)

		after := keptRecords(t, h.Server, keep)
		for id, rec := range kept {
			require.Equal(t, rec, after[id], "%s, a kept job, changed", id)
		}
		t.Logf("%d kept jobs written in %v; %d jobs drained by %d Workers in %v; jobs by attempt directories held: %v",
			keep, built.Round(time.Millisecond), drainJobs, drainWorkers, drained.Round(time.Millisecond), claims)
	})
}
