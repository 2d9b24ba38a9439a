package serve

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/clitest"
	"github.com/axqua/jobstore/internal/testdir"
	"github.com/stretchr/testify/require"
)

func TestEventHub_ASlowClientLosesEventsAndIsToldToResync(t *testing.T) {
	h := newEventHub()
	slow := h.add("")
	other := h.add("job-b")
	const n = 3 * eventBuffer
	for i := range n {
		h.publish([]byte(strconv.Itoa(i)), "job-a") // never blocks
	}
	require.Equal(t, eventBuffer, len(slow.ch))
	require.True(t, slow.behind.Load())
	require.Equal(t, uint64(n-eventBuffer), h.dropped.Load())
	require.Zero(t, len(other.ch), "a job page got another job's events")
	require.False(t, other.behind.Load())
}

// stalledClient opens an event stream and never reads it.
func stalledClient(t *testing.T, ts *testServer) {
	t.Helper()
	c, err := net.Dial("tcp", ts.http.Listener.Addr().String())
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "GET /events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n", testToken)
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode)
}

func TestServe_HundredStreamsFollowAChurningWriterAndAStalledOneStallsNone(t *testing.T) {
	root := testdir.New(t)
	dirs := bulkJobs(t, root, "churn", 10)
	ts := startServer(t, root, false)
	stalledClient(t, ts)
	const clients = 100
	streams := make([]*eventStream, clients)
	for i := range streams {
		streams[i] = ts.openEvents(t, "")
	}
	clitest.WaitUntil(t, "every stream connected", func() bool { return ts.hub.count() == clients+1 })

	const writes = 500
	for i := range writes {
		dir := dirs[i%len(dirs)]
		msg := strconv.Itoa(i)
		if i >= writes-len(dirs) {
			msg = "last"
		}
		require.NoError(t, jobstore.WriteStatus(dir, jobstore.JobStatus{State: jobstore.Running, Seq: uint64(2 + i/len(dirs)), Message: msg},
			jobstore.NoSync()))
	}
	// Meanwhile the pages and the API answer.
	code, _ := ts.get(t, "/api/jobs")
	require.Equal(t, http.StatusOK, code)

	var wg sync.WaitGroup
	for _, es := range streams {
		wg.Go(func() {
			last := map[string]bool{}
			es.waitEvent(t, func(ev sseEvent) bool {
				if ev.name == "resync" { // it fell behind: it would load the rows again
					return true
				}
				if r, ok := jobRowOf(ev); ok && r.Message == "last" {
					last[r.ID] = true
				}
				return len(last) == len(dirs)
			})
		})
	}
	wg.Wait()
}

func TestServe_MemoryStaysFlatOver10000StatusWrites(t *testing.T) {
	root := testdir.New(t)
	dir := bulkJobs(t, root, "mem", 1)[0]
	ts := startServer(t, root, false)
	es := ts.openEvents(t, "")
	go func() {
		for range es.events { // a page that keeps up
		}
	}()
	write := func(from, to int) {
		for seq := from; seq < to; seq++ {
			p := float64(seq%100) / 100
			require.NoError(t, jobstore.WriteStatus(dir, jobstore.JobStatus{State: jobstore.Running, Seq: uint64(seq), Progress: &p,
				Message: "step " + strconv.Itoa(seq)}, jobstore.NoSync()))
		}
		clitest.WaitUntil(t, "the server sees the last write", func() bool {
			j := ts.table.job(dir)
			return j != nil && j.Status != nil && j.Status.Seq == uint64(to-1)
		})
	}
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	write(2, 1000) // warm up
	before := heap()
	write(1000, 11000)
	after := heap()
	t.Logf("heap before %d KiB, after 10,000 writes %d KiB", before>>10, after>>10)
	const bound = 1 << 20 // about 100 bytes a write: a leak of an event or a record a write is more
	require.Less(t, int64(after)-int64(before), int64(bound), "the heap grew")
}

// BenchmarkServe_StatusToEvent measures the time from a status write to
// its event reaching a client connected to /events, with 100 and 10,000
// jobs under the root, beside its baseline in the same run: the same write
// reaching a receiver of WatchRoot in this process, which feeds the server
// (docs/benchmarks.md).
func BenchmarkServe_StatusToEvent(b *testing.B) {
	for _, n := range []int{100, 10000} {
		for _, impl := range []string{"WatchRoot", "serve"} {
			b.Run(fmt.Sprintf("jobs=%d/impl=%s", n, impl), func(b *testing.B) {
				root := b.TempDir()
				dirs := bulkJobs(b, root, "bench", n)
				dir := dirs[n/2]
				var wait func(msg string)
				if impl == "serve" {
					es := startServer(b, root, false).openEvents(b, "")
					wait = func(msg string) {
						es.waitEvent(b, func(ev sseEvent) bool {
							r, ok := jobRowOf(ev)
							return ok && r.ID == dir.ID() && r.Message == msg
						})
					}
				} else {
					ctx, cancel := context.WithCancel(context.Background())
					b.Cleanup(cancel)
					updates, err := jobstore.WatchRoot(ctx, root)
					if err != nil {
						b.Fatal(err)
					}
					for u := range updates {
						if u.Synced {
							break
						}
					}
					wait = func(msg string) {
						for u := range updates {
							if u.Dir == dir && u.Status != nil && u.Status.Message == msg {
								return
							}
						}
					}
				}
				lat := make([]time.Duration, 0, b.N)
				b.ResetTimer()
				for i := range b.N {
					msg := "m" + strconv.Itoa(i)
					start := time.Now()
					if err := jobstore.WriteStatus(dir, jobstore.JobStatus{State: jobstore.Running, Seq: uint64(i + 2), Message: msg},
						jobstore.NoSync()); err != nil {
						b.Fatal(err)
					}
					wait(msg)
					lat = append(lat, time.Since(start))
				}
				b.StopTimer()
				slices.Sort(lat)
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
				b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
			})
		}
	}
}

func TestServe_AJobsStreamStartsWithTheJobAsItIsNow(t *testing.T) {
	root := testdir.New(t)
	dir := clitest.RunJob(t, root, "a", jobstore.Outcome{State: jobstore.Failed, Error: "boom"})
	clitest.Submit(t, root, "b")
	ts := startServer(t, root, false)
	es := ts.openEvents(t, "?job=a")
	ev := es.waitEvent(t, func(sseEvent) bool { return true })
	r, ok := jobRowOf(ev)
	require.True(t, ok, "the first event: %+v", ev)
	require.Equal(t, dir.ID(), r.ID)
	require.Equal(t, "failed", r.State)
	require.Equal(t, "boom", r.Error)
}
