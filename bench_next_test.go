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
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/internal/dirstamp"
)

// benchNextJobs and benchNextQueued: the root BenchmarkStartNext looks at.
const (
	benchNextJobs   = 10_000
	benchNextQueued = 5
)

// BenchmarkStartNext measures one StartNext look on a root of 10,000 jobs
// of which 5 are queued, of a kind the call does not take, so that every
// call looks and finds nothing to start (it returns at once: its context
// is done). Against it, in the same run, the look a worker without
// StartNext makes: List, then the oldest queued job of the kind.
//
//	go test -run '^$' -bench 'StartNext$' -benchtime 20x -count 6 . | tee next.txt
//	benchstat -col /impl next.txt
//
// impl=startnext: the plain call, which makes a view of the root, reads it
// whole (its context is done) and closes the view. impl=view/root=unchanged:
// View.StartNext on a view kept between calls, nothing changed since the
// last: a stat of the root and of each queued job. impl=view/root=changed:
// an entry of root was made and removed before each call (as a submission
// does), so the call reads root and stats every job directory. ns/job is
// ns/op divided by the number of jobs.
func BenchmarkStartNext(b *testing.B) {
	root := benchDir(b)
	for i := range benchNextJobs {
		st := statusIn(jobstore.Succeeded, 3)
		if i%(benchNextJobs/benchNextQueued) == 0 {
			st = statusIn(jobstore.Queued, 1)
		}
		writeJob(b, root, specAt(fmt.Sprintf("job-%05d", i), i), st)
	}
	// A root that has been left alone for a tick is what is measured.
	time.Sleep(dirstamp.CoarseTick + time.Second)
	v := openView(b, root)
	look := func(b *testing.B) {
		r, err := v.StartNext(doneCtx(), jobstore.WithKinds("absent"))
		if r != nil || err == nil {
			b.Fatal("started a job", err)
		}
	}
	perJob := func(b *testing.B) {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchNextJobs, "ns/job")
	}
	b.Run("impl=list", func(b *testing.B) {
		for b.Loop() {
			entries, err := jobstore.List(root)
			if err != nil {
				b.Fatal(err)
			}
			for _, e := range entries {
				if e.Spec != nil && e.Spec.Kind == "absent" && e.Status != nil && e.Status.State == jobstore.Queued {
					b.Fatal("found one")
				}
			}
		}
		perJob(b)
	})
	b.Run("impl=startnext", func(b *testing.B) {
		for b.Loop() {
			r, err := jobstore.StartNext(doneCtx(), root, jobstore.WithKinds("absent"))
			if r != nil || err == nil {
				b.Fatal("started a job", err)
			}
		}
		perJob(b)
	})
	b.Run("impl=view/root=unchanged", func(b *testing.B) {
		look(b) // the first look reads every job: the view keeps them
		for b.Loop() {
			look(b)
		}
		perJob(b)
	})
	b.Run("impl=view/root=changed", func(b *testing.B) {
		look(b)
		touch := filepath.Join(root, ".touch")
		for b.Loop() {
			b.StopTimer()
			if err := os.Mkdir(touch, 0o755); err != nil {
				b.Fatal(err)
			}
			if err := os.Remove(touch); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			look(b)
		}
		perJob(b)
	})
}

// BenchmarkStartNextFound measures one StartNext call that starts a job:
// on a root of 10,000 ended jobs, a job of kind "k" is submitted (not
// timed), then one call with a context that is not done starts it; the
// Run is finished and closed untimed. impl=startnext: the plain call,
// which makes its view (its look reads the live index; its scan of the
// root begins beside it) and ends it before it returns. impl=view:
// View.StartNext on a view kept between calls.
//
//	go test -run '^$' -bench 'StartNextFound' -benchtime 50x -count 3 . | tee found.txt
func BenchmarkStartNextFound(b *testing.B) {
	root := benchDir(b)
	for i := range benchNextJobs {
		writeJob(b, root, specAt(fmt.Sprintf("job-%05d", i), i), statusIn(jobstore.Succeeded, 3))
	}
	time.Sleep(dirstamp.CoarseTick + time.Second) // a root left alone
	v := openView(b, root)
	calls := []struct {
		name string
		call func(ctx context.Context) (*jobstore.Run, error)
	}{
		{"impl=startnext", func(ctx context.Context) (*jobstore.Run, error) {
			return jobstore.StartNext(ctx, root, jobstore.WithKinds("k"))
		}},
		{"impl=view", func(ctx context.Context) (*jobstore.Run, error) {
			return v.StartNext(ctx, jobstore.WithKinds("k"))
		}},
	}
	for _, c := range calls {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				if _, err := jobstore.Submit(root, jobstore.JobSpec{Kind: "k"}); err != nil {
					b.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(context.Background(), waitGuard)
				b.StartTimer()
				r, err := c.call(ctx)
				b.StopTimer()
				cancel()
				if err != nil {
					b.Fatal(err)
				}
				finishSucceeded(b, r)
				b.StartTimer()
			}
		})
	}
}

// latencyWorkerRole runs StartNext on a View of $ROOT (scan interval
// $SCAN, if set) in a loop until stdin says "stop", printing "ready" before each call and "started ID UNIXNANO"
// (when StartNext returned) for each job, which it then finishes. With
// $FLOOR set it is the floor to compare with instead: it reads the ID of
// the next job on stdin, polls that job's status every millisecond until it
// is queued, and Starts it. With $CONTEXT set, it takes the Run's Context
// (what a caller passes to the job's work) before it prints "started".
const latencyWorkerRole = "latency-worker"

func init() { roles[latencyWorkerRole] = latencyWorker }

func latencyWorker() int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	in := bufio.NewScanner(os.Stdin)
	next := make(chan string)
	go func() {
		defer cancel()
		for in.Scan() {
			if in.Text() == "stop" {
				return
			}
			next <- in.Text()
		}
	}()
	root, floor, withContext := os.Getenv("ROOT"), os.Getenv("FLOOR") != "", os.Getenv("CONTEXT") != ""
	var opts []jobstore.StartOption
	if d, err := time.ParseDuration(os.Getenv("SCAN")); err == nil {
		opts = append(opts, jobstore.WithScanInterval(d))
	}
	var view *jobstore.View
	if !floor {
		v, err := jobstore.OpenView(root)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer v.Close()
		view = v
	}
	for {
		fmt.Println("ready")
		var r *jobstore.Run
		var err error
		if floor {
			select {
			case id := <-next:
				r, err = pollStart(ctx, jobstore.JobDir(filepath.Join(root, id)))
			case <-ctx.Done():
				return 0
			}
		} else {
			r, err = view.StartNext(ctx, opts...)
		}
		if err != nil {
			return 0
		}
		if withContext {
			_ = r.Context()
		}
		at := time.Now().UnixNano()
		fmt.Printf("started %s %d\n", r.Dir().ID(), at)
		_ = r.Finish(jobstore.Outcome{State: jobstore.Succeeded})
		_ = r.Close()
	}
}

// pollStart starts dir as soon as its status says queued, looking every
// millisecond: the floor of any worker's latency (it is told which job to
// look at).
func pollStart(ctx context.Context, dir jobstore.JobDir) (*jobstore.Run, error) {
	for ctx.Err() == nil {
		if st, err := jobstore.ReadStatus(dir); err == nil && st != nil && st.State == jobstore.Queued {
			return jobstore.Start(dir)
		}
		time.Sleep(time.Millisecond)
	}
	return nil, ctx.Err()
}

// startLatencies submits n jobs one at a time under submitRoot, each once
// the worker k is ready (and waits a little, so that it is idle in
// StartNext), and returns for each the time from Submit's return to the
// worker's start of it (one host: one clock), sorted.
func startLatencies(tb testing.TB, k *child, submitRoot string, n int, tellID bool) []time.Duration {
	tb.Helper()
	lat := make([]time.Duration, 0, n)
	read := func() string {
		line, err := k.out.ReadString('\n')
		if err != nil {
			tb.Fatal(err)
		}
		return strings.TrimSpace(line)
	}
	for i := range n {
		if line := read(); line != "ready" {
			tb.Fatalf("worker said %q, want ready", line)
		}
		id := fmt.Sprintf("lat%03d", i)
		if tellID {
			fmt.Fprintln(k.stdin, id)
		}
		time.Sleep(10 * time.Millisecond) // the worker is idle by now
		if _, err := jobstore.Submit(submitRoot, jobstore.JobSpec{ID: id, Kind: "k"}); err != nil {
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
		lat = append(lat, time.Unix(0, ns).Sub(submitted))
	}
	fmt.Fprintln(k.stdin, "stop")
	_ = k.cmd.Wait()
	slices.Sort(lat)
	return lat
}

// quantile is the q-quantile of sorted durations (nearest rank).
func quantile(sorted []time.Duration, q float64) time.Duration {
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// reportLatencies reports p50, p99 and max in milliseconds.
func reportLatencies(b *testing.B, lat []time.Duration) {
	b.ReportMetric(float64(quantile(lat, 0.5).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(quantile(lat, 0.99).Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max-ms")
}

// BenchmarkStartNextLatency: a worker process idle in StartNext on this
// host; this process submits 100 jobs, one at a time. Reported: the time
// from Submit's return to StartNext's return in the worker (which includes
// Start's durable write of the running status), p50, p99 and max.
// impl=floor, in the same run, is a worker told each job's ID in advance
// that polls its status every millisecond and Starts it once queued: no
// worker can do better, so the difference is what finding the job costs.
//
//	go test -run '^$' -bench 'StartNextLatency' -benchtime 1x -count 5 . | tee latency.txt
//	benchstat -col /impl latency.txt
func BenchmarkStartNextLatency(b *testing.B) {
	for _, impl := range []string{"floor", "startnext"} {
		b.Run("impl="+impl, func(b *testing.B) {
			root := benchDir(b)
			env := []string{"ROOT=" + root}
			if impl == "floor" {
				env = append(env, "FLOOR=1")
			}
			for b.Loop() {
				reportLatencies(b, startLatencies(b, startRole(b, latencyWorkerRole, env...), root, 100, impl == "floor"))
			}
		})
	}
}
