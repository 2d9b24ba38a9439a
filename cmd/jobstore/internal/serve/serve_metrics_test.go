package serve

import (
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/clitest"
	"github.com/axqua/jobstore/cmd/jobstore/internal/jobmetrics"
	"github.com/axqua/jobstore/cmd/jobstore/internal/jobview"
	"github.com/axqua/jobstore/internal/testdir"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"
)

// scrape reads /metrics with the Prometheus text parser.
func (ts *testServer) scrape(t *testing.T) map[string]*dto.MetricFamily {
	t.Helper()
	code, body := ts.get(t, "/metrics")
	require.Equal(t, http.StatusOK, code)
	return clitest.ParseExposition(t, strings.NewReader(body))
}

// writeSeen writes st to dir and waits until the server has seen it.
func (ts *testServer) writeSeen(t *testing.T, dir jobstore.JobDir, st jobstore.JobStatus) {
	t.Helper()
	require.NoError(t, jobstore.WriteStatus(dir, st))
	clitest.WaitUntil(t, "the server sees seq "+string(rune('0'+st.Seq)), func() bool {
		j := ts.table.job(dir)
		return j != nil && j.Status != nil && j.Status.Seq == st.Seq
	})
}

func TestServe_MetricsParseAndCountWhatHappens(t *testing.T) {
	root := testdir.New(t)
	const evilKind = "a \"quoted\"\nkind\\"
	queued := clitest.Submit(t, root, "q-old")
	_, err := jobstore.Submit(root, jobstore.JobSpec{ID: "q-evil", Kind: evilKind})
	require.NoError(t, err)
	ts := startServer(t, root, false)

	// One run that succeeds, two that fail, one marked lost, one of the
	// failed ones retried: each record waited for, so that none is skipped.
	ok := clitest.Submit(t, root, "a-ok")
	bad := clitest.Submit(t, root, "b-bad")
	lost := clitest.Submit(t, root, "c-lost")
	again := clitest.Submit(t, root, "d-again")
	for _, d := range []jobstore.JobDir{ok, bad, lost, again} {
		clitest.WaitUntil(t, "the server sees "+d.ID(), func() bool { return ts.table.job(d) != nil })
	}
	started := jobstore.Now().Add(-90 * time.Second)
	finished := jobstore.Now()
	ts.writeSeen(t, ok, jobstore.JobStatus{State: jobstore.Running, Seq: 2, Attempt: 1, StartedAt: &started})
	ts.writeSeen(t, ok, jobstore.JobStatus{State: jobstore.Succeeded, Seq: 3, Attempt: 1, StartedAt: &started, FinishedAt: &finished})
	ts.writeSeen(t, bad, jobstore.JobStatus{State: jobstore.Failed, Seq: 2, Attempt: 1, StartedAt: &started, FinishedAt: &finished, Error: "boom"})
	ts.writeSeen(t, lost, jobstore.JobStatus{State: jobstore.Lost, Seq: 2, Attempt: 1, StartedAt: &started, FinishedAt: &finished})
	ts.writeSeen(t, again, jobstore.JobStatus{State: jobstore.Failed, Seq: 2, Attempt: 1, StartedAt: &started, FinishedAt: &finished})
	require.NoError(t, jobstore.Retry(again)) // queued again: a retry
	clitest.WaitUntil(t, "the server sees the retry", func() bool {
		j := ts.table.job(again)
		return j != nil && j.Status != nil && j.Status.State == jobstore.Queued
	})

	fams := ts.scrape(t)
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"jobstore_jobs", []string{"state", "queued", "kind", "render"}, 2},
		{"jobstore_jobs", []string{"state", "queued", "kind", evilKind}, 1},
		{"jobstore_jobs", []string{"state", "succeeded", "kind", "render"}, 1},
		{"jobstore_jobs", []string{"state", "failed", "kind", "render"}, 1},
		{"jobstore_jobs", []string{"state", "lost", "kind", "render"}, 1},
		{"jobstore_job_starts_total", []string{"kind", "render"}, 4},
		{"jobstore_job_failures_total", []string{"kind", "render"}, 2},
		{"jobstore_job_rescues_total", []string{"kind", "render"}, 1},
		{"jobstore_job_retries_total", []string{"kind", "render"}, 1},
		{"jobstore_job_duration_seconds", []string{"kind", "render"}, 4},
		{"jobstore_jobs_finished_total", []string{"kind", "render", "state", "succeeded"}, 1},
		{"jobstore_jobs_finished_total", []string{"kind", "render", "state", "failed"}, 2},
		{"jobstore_jobs_finished_total", []string{"kind", "render", "state", "lost"}, 1},
		{"jobstore_jobs_finished_total", []string{"kind", "render", "state", "cancelled"}, 0},
		{"jobstore_jobs_finished_total", []string{"kind", evilKind, "state", "failed"}, 0},
		{"jobstore_job_queue_wait_seconds", []string{"kind", "render"}, 4},
		{"jobstore_job_starts_total", []string{"kind", evilKind}, 0},
		{"jobstore_jobs", []string{"state", "running", "kind", "render"}, 0},
		{"jobstore_root_readable", nil, 1},
	} {
		got, found := clitest.MetricValue(fams, c.name, c.labels...)
		require.True(t, found, "%s%v", c.name, c.labels)
		require.Equal(t, c.want, got, "%s%v", c.name, c.labels)
	}
	require.Contains(t, fams, "go_goroutines", "the Go runtime's metrics")
	if runtime.GOOS == "linux" { // where the process collector has every metric
		require.Contains(t, fams, "process_start_time_seconds", "the process's metrics")
	}
	h := histogramOf(t, fams, "jobstore_job_duration_seconds", "render")
	require.InDelta(t, 4*90, h.GetSampleSum(), 4)
	for _, b := range h.Bucket {
		want := uint64(0)
		if b.GetUpperBound() >= 90 {
			want = 4
		}
		require.Equal(t, want, b.GetCumulativeCount(), "bucket le=%v", b.GetUpperBound())
	}
	age, found := clitest.MetricValue(fams, "jobstore_oldest_queued_age_seconds", "kind", "render")
	require.True(t, found)
	spec, err := jobstore.ReadSpec(queued)
	require.NoError(t, err)
	require.InDelta(t, time.Since(spec.SubmittedAt).Seconds(), age, 5)
}

// histogramOf is the histogram of fams named name of kind.
func histogramOf(t *testing.T, fams map[string]*dto.MetricFamily, name, kind string) *dto.Histogram {
	t.Helper()
	require.Contains(t, fams, name)
	for _, m := range fams[name].Metric {
		for _, l := range m.Label {
			if l.GetName() == "kind" && l.GetValue() == kind {
				return m.Histogram
			}
		}
	}
	require.FailNow(t, "no such histogram", "%s{kind=%q}", name, kind)
	return nil
}

// valueOf is the value of a counter, or the sample count of a histogram.
func valueOf(t *testing.T, m prometheus.Metric) uint64 {
	t.Helper()
	var d dto.Metric
	require.NoError(t, m.Write(&d))
	if d.Histogram != nil {
		return d.Histogram.GetSampleCount()
	}
	return uint64(d.Counter.GetValue())
}

func TestServeMetrics_ObserveCountsTransitions(t *testing.T) {
	spec := &jobstore.JobSpec{Kind: "k"}
	at := func(s int) *time.Time { v := time.Unix(int64(s), 0); return &v }
	job := func(state jobstore.State, seq, attempt uint64, started, finished *time.Time) *jobview.WatchedJob {
		return &jobview.WatchedJob{Spec: spec, Status: &jobstore.JobStatus{State: state, Seq: seq, Attempt: attempt, StartedAt: started, FinishedAt: finished}}
	}
	for _, c := range []struct {
		name                                        string
		prev, next                                  *jobview.WatchedJob
		starts, retries, failures, rescues, n, ends uint64
	}{
		{"queued to running", job("queued", 1, 0, nil, nil), job("running", 2, 1, at(10), nil), 1, 0, 0, 0, 0, 0},
		{"running to running", job("running", 2, 1, at(10), nil), job("running", 3, 1, at(10), nil), 0, 0, 0, 0, 0, 0},
		{"the same record again", job("running", 2, 1, at(10), nil), job("running", 2, 1, at(10), nil), 0, 0, 0, 0, 0, 0},
		{"queued to succeeded, running skipped", job("queued", 1, 0, nil, nil), job("succeeded", 3, 1, at(10), at(20)), 1, 0, 0, 0, 1, 1},
		{"running to failed", job("running", 2, 1, at(10), nil), job("failed", 3, 1, at(10), at(20)), 0, 0, 1, 0, 1, 1},
		{"running to lost", job("running", 2, 1, at(10), nil), job("lost", 3, 1, at(10), at(20)), 0, 0, 0, 1, 1, 1},
		{"running to queued: an attempt ended, to run again", job("running", 2, 1, at(10), nil), job("queued", 3, 1, nil, nil), 0, 0, 0, 0, 0, 1},
		{"failed to queued: a retry", job("failed", 3, 1, at(10), at(20)), job("queued", 4, 1, nil, nil), 0, 1, 0, 0, 0, 0},
		{"failed to running: a retry and a start", job("failed", 3, 1, at(10), at(20)), job("running", 5, 2, at(30), nil), 1, 1, 0, 0, 0, 0},
		{"a new job already finished", nil, job("failed", 3, 1, at(10), at(20)), 1, 0, 1, 0, 1, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := newServeMetrics()
			m.observe(c.prev, c.next)
			require.Equal(t, c.starts, valueOf(t, m.jobs.Starts.WithLabelValues("k")), "starts")
			require.Equal(t, c.starts, valueOf(t, m.jobs.QueueWait.WithLabelValues("k").(prometheus.Metric)), "queue waits")
			require.Equal(t, c.retries, valueOf(t, m.retries.WithLabelValues("k")), "retries")
			require.Equal(t, c.failures, valueOf(t, m.failures.WithLabelValues("k")), "failures")
			require.Equal(t, c.rescues, valueOf(t, m.rescues.WithLabelValues("k")), "rescues")
			require.Equal(t, c.n, valueOf(t, m.jobs.Duration.WithLabelValues("k").(prometheus.Metric)), "durations")
			var ends uint64
			for _, s := range jobmetrics.EndStates() {
				ends += valueOf(t, m.jobs.Ends.WithLabelValues("k", string(s)))
			}
			require.Equal(t, c.ends, ends, "ends")
		})
	}
}
