//go:build unix

package jobstore_test

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/axqua/jobstore"
)

// benchWriterRole writes, for each line "dir seq" on stdin, a running
// status with that seq (NoSync) and answers "ok": a writer whose CPU is not
// the benchmark's.
const benchWriterRole = "benchwriter"

func init() {
	roles[benchWriterRole] = func() int {
		in := bufio.NewScanner(os.Stdin)
		for in.Scan() {
			dir, s, _ := strings.Cut(in.Text(), " ")
			seq, _ := strconv.ParseUint(s, 10, 64)
			if err := jobstore.WriteStatus(jobstore.JobDir(dir), *statusIn(jobstore.Running, seq), jobstore.NoSync()); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			fmt.Println("ok")
		}
		return 0
	}
}

// BenchmarkWatchRootCPUPerChange: this process's CPU (getrusage: user +
// system) per change delivered, on a root of 1,000 jobs and on one of
// 10,000, both followed at once, in alternating rounds of 50 changes made
// by a child process. Metrics: µs of CPU per change for each, and
// "10k/1k", which stays near 1 when a change costs O(1).
func BenchmarkWatchRootCPUPerChange(b *testing.B) {
	small, large := benchRoot(b, 1000), benchRoot(b, benchListJobs)
	smallCh, stopSmall := untilSynced(b, small)
	defer stopSmall()
	largeCh, stopLarge := untilSynced(b, large)
	defer stopLarge()
	time.Sleep(settleTime)
	cmd := childCommand(b, benchWriterRole)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	startChild(b, cmd)
	defer stdin.Close()
	out := bufio.NewReader(stdout)
	var cpu [2]time.Duration
	var changes [2]int
	seq := uint64(1_000_000)
	for b.Loop() {
		for round := range 20 {
			k := round % 2
			root, ch, n := small, smallCh, 1000
			if k == 1 {
				root, ch, n = large, largeCh, benchListJobs
			}
			t0 := cpuTime(b)
			for i := range 50 {
				seq++
				dir := fmt.Sprintf("%s/job-%05d", root, (int(seq)*7919+i)%n)
				fmt.Fprintf(stdin, "%s %d\n", dir, seq)
				for u := range ch {
					if string(u.Dir) == dir && u.Status != nil && u.Status.Seq == seq {
						break
					}
				}
				if line, err := out.ReadString('\n'); err != nil || line != "ok\n" {
					b.Fatal("writer:", line, err)
				}
			}
			cpu[k] += cpuTime(b) - t0
			changes[k] += 50
		}
	}
	per := func(k int) float64 { return float64(cpu[k].Microseconds()) / float64(changes[k]) }
	b.ReportMetric(per(0), "1k-cpu-µs/change")
	b.ReportMetric(per(1), "10k-cpu-µs/change")
	b.ReportMetric(per(1)/per(0), "10k/1k")
}

// BenchmarkWatchRootIdleCPU: this process's CPU per second over 3 s while
// a WatchRoot of 10,000 jobs that do not change runs (events and the 1 s
// safety poll), against 3 s of the same process with none, alternating;
// then the same root on the poll alone (WithoutEvents, 1 s), which stats
// every job each second. Metrics in ms of CPU per second.
func BenchmarkWatchRootIdleCPU(b *testing.B) {
	root := benchRoot(b, benchListJobs)
	const window = 3 * time.Second
	measure := func() float64 {
		runtime.GC()
		t0 := cpuTime(b)
		time.Sleep(window)
		return float64((cpuTime(b) - t0).Microseconds()) / 1000 / window.Seconds()
	}
	var none, events, poll float64
	for b.Loop() {
		none += measure()
		_, stop := untilSynced(b, root)
		time.Sleep(settleTime)
		events += measure()
		stop()
		_, stop = untilSynced(b, root, jobstore.WithoutEvents(), jobstore.WithPollInterval(time.Second))
		time.Sleep(settleTime)
		poll += measure()
		stop()
	}
	n := float64(b.N)
	b.ReportMetric(none/n, "none-cpu-ms/s")
	b.ReportMetric(events/n, "events-cpu-ms/s")
	b.ReportMetric(poll/n, "poll-only-cpu-ms/s")
}
