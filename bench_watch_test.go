package jobstore_test

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/axqua/jobstore"
)

// latencyWriter, for each line N on stdin, writes status.json of the job
// in JOBSTORE_TEST_DIR with seq N and, as its message, the wall clock
// (Unix ns) just before the write; it exits when stdin closes.
func latencyWriter() int {
	dir := jobstore.JobDir(os.Getenv(dirEnv))
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		seq, err := strconv.ParseUint(strings.TrimSpace(in.Text()), 10, 64)
		if err != nil {
			return exitCode(err)
		}
		st := jobstore.JobStatus{State: jobstore.Running, Seq: seq, Message: strconv.FormatInt(time.Now().UnixNano(), 10)}
		if err := jobstore.WriteStatus(dir, st, jobstore.NoSync()); err != nil {
			return exitCode(err)
		}
	}
	return 0
}

// BenchmarkWatchLatency measures how long a status written by another
// process takes to reach a Watch receiver, from just before the write to
// the receive, on the repository's disk: by events (impl=events, 200
// updates) against 1 Hz polling alone (impl=poll-1Hz, the baseline: how
// `jobstore watch` followed a job before Watch; 20 updates). Before each
// write the parent waits a random time (up to one poll interval for the
// baseline, so that writes fall at every phase of the poll; up to 2 ms
// for events, so that the watcher is idle when the write comes). The
// metrics are per update; ns/op is one round of updates.
//
//	go test -run '^$' -bench 'WatchLatency' -benchtime 1x -count 3 . | tee watch.txt
func BenchmarkWatchLatency(b *testing.B) {
	for _, impl := range []struct {
		name    string
		updates int
		pause   time.Duration
		opts    []jobstore.WatchOption
	}{
		{"poll-1Hz", 20, time.Second, []jobstore.WatchOption{jobstore.WithoutEvents(), jobstore.WithPollInterval(time.Second)}},
		{"events", 200, 2 * time.Millisecond, nil},
	} {
		b.Run("impl="+impl.name, func(b *testing.B) {
			var lat []time.Duration
			for b.Loop() {
				lat = append(lat, watchLatency(b, impl.updates, impl.pause, impl.opts)...)
			}
			slices.Sort(lat)
			ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
			var sum time.Duration
			for _, d := range lat {
				sum += d
			}
			b.ReportMetric(ms(lat[len(lat)/2]), "p50-ms")
			b.ReportMetric(ms(lat[(len(lat)*99+99)/100-1]), "p99-ms")
			b.ReportMetric(ms(sum/time.Duration(len(lat))), "mean-ms")
		})
	}
}

// watchLatency runs one round: a fresh job, a watcher, a writer child, and
// updates statuses written by the child, each received before the next.
func watchLatency(b *testing.B, updates int, pause time.Duration, opts []jobstore.WatchOption) []time.Duration {
	b.Helper()
	dir := benchJob(b, benchDir(b), "job")
	if err := jobstore.WriteStatus(dir, jobstore.JobStatus{State: jobstore.Running, Seq: 1}); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, err := jobstore.Watch(ctx, dir, opts...)
	if err != nil {
		b.Fatal(err)
	}
	if u := <-ch; u.Status == nil || u.Status.Seq != 1 {
		b.Fatalf("first update %+v", u)
	}
	cmd := childCommand(b, "latencywriter", dirEnv+"="+string(dir))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	startChild(b, cmd)
	defer func() {
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			b.Error(err)
		}
	}()
	lat := make([]time.Duration, 0, updates)
	for seq := 2; seq < updates+2; seq++ {
		time.Sleep(rand.N(pause))
		if _, err := fmt.Fprintln(stdin, seq); err != nil {
			b.Fatal(err)
		}
		for {
			u, ok := <-ch
			if !ok || u.Err != nil {
				b.Fatalf("watch ended: %+v", u)
			}
			if u.Status.Seq == uint64(seq) {
				now := time.Now()
				sent, err := strconv.ParseInt(u.Status.Message, 10, 64)
				if err != nil {
					b.Fatal(err)
				}
				lat = append(lat, now.Sub(time.Unix(0, sent)))
				break
			}
		}
	}
	return lat
}
