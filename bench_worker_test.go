package jobstore_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/internal/dirstamp"
)

// workerLatencyRole runs a Worker of $ROOT until stdin says "stop". It
// prints "ready" before Run, and its handler prints "started ID UNIXNANO"
// when it begins, finishes the job and prints "ready": the protocol of
// latencyWorkerRole, which startLatencies drives.
const workerLatencyRole = "worker-latency"

func init() { roles[workerLatencyRole] = workerLatency }

func workerLatency() int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		in := bufio.NewScanner(os.Stdin)
		for in.Scan() && in.Text() != "stop" {
		}
		cancel()
	}()
	w, err := jobstore.NewWorker(os.Getenv("ROOT"), func(ctx context.Context, run *jobstore.Run) error {
		at := time.Now().UnixNano()
		fmt.Printf("started %s %d\n", run.Dir().ID(), at)
		err := run.Finish(jobstore.Outcome{State: jobstore.Succeeded})
		fmt.Println("ready")
		return err
	})
	if err != nil {
		fmt.Println("err", err)
		return 1
	}
	fmt.Println("ready")
	if err := w.Run(ctx); err != nil {
		fmt.Println("err", err)
		return 1
	}
	return 0
}

// BenchmarkWorkerLatency: three worker processes idle on this host, each
// on its own root: a Worker (its handler, which gets the Run's Context,
// prints when it begins), StartNext in a loop (latencyWorkerRole, which
// prints when StartNext returns), and StartNext in a loop that takes the
// Run's Context first, as a caller does to pass it to the job's work
// (startnext+context). The benchmark submits 100 jobs to each, one at a
// time, in rounds (the order rotated every round), each once its worker
// is waiting again, and measures from Submit's return to the start of the
// job's work in the worker (one host, one clock). All include Start's
// durable write of the running status. The rounds make all see the same
// load, so the ratios (worker to each StartNext: of p50, of p99, and the
// median of the ratios of the samples of one round) are what counts; also
// reported, per impl, p50, p99 and max in milliseconds, and the p50 of
// started_at (which Start records after its claim, before its durable
// write) after Submit's return: what finding and claiming the job takes.
//
//	go test -run '^$' -bench 'WorkerLatency' -benchtime 1x -count 6 . | tee worker-latency.txt
func BenchmarkWorkerLatency(b *testing.B) {
	const samples = 100
	impls := []struct{ name, role, env string }{
		{"startnext", latencyWorkerRole, ""},
		{"startnext+context", latencyWorkerRole, "CONTEXT=1"},
		{"worker", workerLatencyRole, ""},
	}
	for b.Loop() {
		type side struct {
			root       string
			k          *child
			lat, claim []time.Duration
		}
		sides := make([]*side, len(impls))
		for i, im := range impls {
			root := benchDir(b)
			sides[i] = &side{root: root, k: startRole(b, im.role, "ROOT="+root, im.env)}
		}
		for n := range samples {
			for j := range sides {
				s := sides[(j+n)%len(sides)]
				lat, claim := startLatency(b, s.k, s.root, fmt.Sprintf("lat%03d", n))
				s.lat, s.claim = append(s.lat, lat), append(s.claim, claim)
			}
		}
		// Each round's samples were taken back to back: the median of their
		// ratios compares two impls under the same load, sample by sample.
		wk := sides[2]
		for _, base := range sides[:2] {
			pairs := make([]float64, samples)
			for n := range samples {
				pairs[n] = float64(wk.lat[n]) / float64(base.lat[n])
			}
			slices.Sort(pairs)
			name := impls[slices.Index(sides, base)].name
			b.ReportMetric(pairs[samples/2], "pairs-p50-worker/"+name)
		}
		for i, s := range sides {
			fmt.Fprintln(s.k.stdin, "stop")
			_ = s.k.cmd.Wait()
			slices.Sort(s.lat)
			slices.Sort(s.claim)
			name := impls[i].name
			b.ReportMetric(ms(quantile(s.lat, 0.5)), name+"-p50-ms")
			b.ReportMetric(ms(quantile(s.lat, 0.99)), name+"-p99-ms")
			b.ReportMetric(ms(s.lat[len(s.lat)-1]), name+"-max-ms")
			b.ReportMetric(ms(quantile(s.claim, 0.5)), name+"-started-at-p50-ms")
		}
		for i, base := range sides[:2] {
			b.ReportMetric(float64(quantile(wk.lat, 0.5))/float64(quantile(base.lat, 0.5)), "p50-worker/"+impls[i].name)
			b.ReportMetric(float64(quantile(wk.lat, 0.99))/float64(quantile(base.lat, 0.99)), "p99-worker/"+impls[i].name)
		}
	}
}

// ms is d in milliseconds, for ReportMetric.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// startLatency waits for worker k to say "ready", lets it go idle, submits
// the job id under root and returns the time from Submit's return to the
// worker's start of it, and to the started_at it recorded.
func startLatency(tb testing.TB, k *child, root, id string) (lat, claim time.Duration) {
	tb.Helper()
	read := func() string {
		line, err := k.out.ReadString('\n')
		if err != nil {
			tb.Fatal(err)
		}
		return strings.TrimSpace(line)
	}
	if line := read(); line != "ready" {
		tb.Fatalf("worker said %q, want ready", line)
	}
	time.Sleep(10 * time.Millisecond) // the worker is idle by now
	dir, err := jobstore.Submit(root, jobstore.JobSpec{ID: id, Kind: "k"})
	if err != nil {
		tb.Fatal(err)
	}
	submitted := time.Now()
	f := strings.Fields(read())
	if len(f) != 3 || f[0] != "started" || f[1] != id {
		tb.Fatalf("worker said %q, want the start of %s", f, id)
	}
	ns, err := strconv.ParseInt(f[2], 10, 64)
	if err != nil {
		tb.Fatal(err)
	}
	st, err := jobstore.ReadStatus(dir)
	if err != nil || st == nil || st.StartedAt == nil {
		tb.Fatalf("status of %s: %+v, %v", id, st, err)
	}
	return time.Unix(0, ns).Sub(submitted), st.StartedAt.Sub(submitted)
}

// notBeforeLead is how far ahead of Submit's return a job's not_before is
// set in BenchmarkWorkerNotBefore: past Submit's durable writes, whatever
// the load.
const notBeforeLead = 50 * time.Millisecond

// BenchmarkWorkerNotBefore: a Worker of this process waits; the benchmark
// submits 100 jobs one at a time, each with not_before 50 ms ahead, and
// measures how late after its not_before each job's handler begins (one
// host, one clock). Reported: p50, p99 and max, in milliseconds; the p50
// and p99 of started_at (which Start records after its claim, before its
// durable write of the running status) after not_before; and how many
// Submits returned after their job's due time (a sample then counts from
// its due time all the same). impl=timer, in the same run, is the floor:
// each job started by Start from a timer set, by the one who submitted it,
// for its not_before, and timed the same way; a scheduler that knows each
// due time without looking and must then Start the job can do no better.
//
//	go test -run '^$' -bench 'WorkerNotBefore' -benchtime 1x -count 6 . | tee notbefore.txt
//	benchstat -col /impl notbefore.txt
func BenchmarkWorkerNotBefore(b *testing.B) {
	const samples = 100
	type start struct{ at, recorded time.Time } // when the work began, and started_at
	for _, impl := range []string{"timer", "worker"} {
		b.Run("impl="+impl, func(b *testing.B) {
			root := benchDir(b)
			started := make(chan start, 1)
			begin := func(run *jobstore.Run) { started <- start{time.Now(), *run.Status().StartedAt} }
			if impl == "worker" {
				w, err := jobstore.NewWorker(root, func(ctx context.Context, run *jobstore.Run) error {
					begin(run)
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
				ctx, cancel := context.WithCancel(context.Background())
				var wg sync.WaitGroup
				wg.Go(func() {
					if err := w.Run(ctx); err != nil {
						b.Error(err)
					}
				})
				defer func() { cancel(); wg.Wait() }()
			}
			n := 0
			for b.Loop() {
				lat, found := make([]time.Duration, 0, samples), make([]time.Duration, 0, samples)
				lateSubmits := 0
				for range samples {
					n++
					due := jobstore.Now().Add(notBeforeLead)
					dir, err := jobstore.Submit(root, jobstore.JobSpec{ID: fmt.Sprintf("nb%04d", n), Kind: "k", NotBefore: due})
					if err != nil {
						b.Fatal(err)
					}
					if time.Now().After(due) {
						lateSubmits++
					}
					if impl == "timer" {
						time.AfterFunc(time.Until(due), func() {
							r, err := jobstore.Start(dir)
							if err != nil {
								b.Error(err)
								return
							}
							begin(r)
							_ = r.Finish(jobstore.Outcome{State: jobstore.Succeeded})
							_ = r.Close()
						})
					}
					select {
					case s := <-started:
						lat, found = append(lat, s.at.Sub(due)), append(found, s.recorded.Sub(due))
					case <-time.After(waitGuard):
						b.Fatal("the job was not started past its not_before")
					}
				}
				slices.Sort(lat)
				slices.Sort(found)
				if found[0] < 0 {
					b.Fatalf("a job started %v before its not_before", -found[0])
				}
				reportLatencies(b, lat)
				b.ReportMetric(float64(quantile(found, 0.5).Microseconds())/1000, "started-at-p50-ms")
				b.ReportMetric(float64(quantile(found, 0.99).Microseconds())/1000, "started-at-p99-ms")
				b.ReportMetric(float64(lateSubmits), "late-submits")
			}
		})
	}
}

// rescueRunning is how many jobs run in BenchmarkWorkerRescuePass's roots.
const rescueRunning = 8

// BenchmarkWorkerRescuePass: the rescue pass of a Worker (what it does
// each scan interval: the running jobs its view of the root knows brought
// up to date, then each judged), on a root of 1,000 jobs and on one of
// 50,000, in each of which 8 run (started by this process, alive) and the
// rest ended, built once per process with the records written directly
// and left alone between passes, as a root is between submissions. Each
// op is one pass on each root, in turns (the order swapped every op), so
// that both see the same load: reported are the mean time of a pass on
// each, in µs, and their ratio, which is what counts: a pass should cost
// what the running jobs cost, not what the root keeps.
//
//	go test -run '^$' -bench 'WorkerRescuePass' -benchtime 400x -count 6 . | tee rescue.txt
func BenchmarkWorkerRescuePass(b *testing.B) {
	sizes := []int{1_000, 50_000}
	var passes []func() int
	for _, jobs := range sizes {
		root := benchDir(b)
		for i := range jobs {
			st := statusIn(jobstore.Succeeded, 3)
			if i%(jobs/rescueRunning) == 0 {
				st = statusIn(jobstore.Queued, 1)
			}
			writeJob(b, root, specAt(fmt.Sprintf("job-%05d", i), i), st)
		}
		for i := range jobs {
			if i%(jobs/rescueRunning) != 0 {
				continue
			}
			r, err := jobstore.Start(jobstore.JobDir(filepath.Join(root, fmt.Sprintf("job-%05d", i))))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = r.Close() })
		}
		pass, closePass, err := jobstore.RescuePass(root) // the look that makes the Worker's view
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(closePass)
		passes = append(passes, pass)
	}
	// A running job is read again only when its stamp moves; roots that
	// have been left alone for a tick are what is measured.
	time.Sleep(dirstamp.CoarseTick + time.Second)
	for i, pass := range passes {
		if n := pass(); n != rescueRunning {
			b.Fatalf("judged %d running jobs of %d, want %d", n, sizes[i], rescueRunning)
		}
	}
	// One sub-benchmark, so that the roots are built once per process
	// whatever -count says.
	b.Run("jobs=1000+50000", func(b *testing.B) {
		spent := make([]time.Duration, len(passes))
		turn := 0
		for b.Loop() {
			for k := range passes {
				i := (k + turn) % len(passes)
				t0 := time.Now()
				passes[i]()
				spent[i] += time.Since(t0)
			}
			turn++
		}
		for i, jobs := range sizes {
			b.ReportMetric(float64(spent[i].Microseconds())/float64(b.N), fmt.Sprintf("us/pass-%d", jobs))
		}
		b.ReportMetric(float64(spent[1])/float64(spent[0]), "ratio")
	})
}
