package serve

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/jobmetrics"
	"github.com/axqua/jobstore/cmd/jobstore/internal/jobview"
)

// This file is serve's /metrics. Gauges are counted from the table at
// each scrape; counters and histograms from the changes WatchRoot
// delivered since the server started (docs/cli.md says how each is
// derived); the Go runtime's and the process's own are there too.

// serveMetrics are the server's registry and its counters.
type serveMetrics struct {
	reg      *prometheus.Registry
	started  time.Time
	jobs     *jobmetrics.JobMetrics
	rescues  *prometheus.CounterVec
	retries  *prometheus.CounterVec
	failures *prometheus.CounterVec
}

func newServeMetrics() *serveMetrics {
	reg := prometheus.NewRegistry()
	counter := func(name, help string) *prometheus.CounterVec {
		c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, []string{"kind"})
		reg.MustRegister(c)
		return c
	}
	m := &serveMetrics{reg: reg, started: time.Now(),
		jobs: jobmetrics.NewJobMetrics(reg, "Runs started since the server started: a status with a started_at (or attempt) not seen before."),
		rescues: counter("jobstore_job_rescues_total",
			"Jobs marked lost since the server started: their runner was judged gone and the job taken from it."),
		retries:  counter("jobstore_job_retries_total", "Jobs queued or running again after they had ended, since the server started."),
		failures: counter("jobstore_job_failures_total", "Jobs that ended failed since the server started."),
	}
	jobmetrics.ProcessCollectors(reg)
	return m
}

// declare makes the series of kind exist at 0.
func (m *serveMetrics) declare(kind string) {
	m.jobs.Declare(kind)
	m.rescues.WithLabelValues(kind)
	m.retries.WithLabelValues(kind)
	m.failures.WithLabelValues(kind)
}

// observe counts what changed from prev (nil: a job new to the server) to
// j, a job's next record as WatchRoot delivered it.
func (m *serveMetrics) observe(prev, j *jobview.WatchedJob) {
	st := j.Status
	if st == nil {
		return
	}
	var was *jobstore.JobStatus
	if prev != nil {
		was = prev.Status
	}
	if was != nil && was.Seq == st.Seq && was.Attempt == st.Attempt && was.State == st.State {
		return // the same record (a cancel request or a readable record again)
	}
	kind := "?"
	if j.Spec != nil {
		kind = j.Spec.Kind
	}
	m.declare(kind)
	wasState := jobstore.State("")
	var retryAt *time.Time
	if was != nil {
		wasState, retryAt = was.State, was.RetryAt
	}
	// A start: a started_at not seen before (a start whose running
	// record was skipped, the latest record winning, counts too).
	if st.StartedAt != nil && (was == nil || was.StartedAt == nil || !was.StartedAt.Equal(*st.StartedAt) || was.Attempt != st.Attempt) {
		m.jobs.Started(kind, st.StartedAt.Sub(jobmetrics.ReadyAt(j.Spec, st, retryAt)))
	}
	// A retry: a job that had ended is queued or running again.
	if wasState.Terminal() && !st.State.Terminal() {
		m.retries.WithLabelValues(kind).Inc()
	}
	if st.State != wasState {
		switch st.State {
		case jobstore.Failed:
			m.failures.WithLabelValues(kind).Inc()
		case jobstore.Lost: // its runner judged gone and the job rescued from it
			m.rescues.WithLabelValues(kind).Inc()
		}
	}
	switch {
	case st.State.Terminal() && !wasState.Terminal():
		ran := time.Duration(-1)
		if st.StartedAt != nil && st.FinishedAt != nil {
			ran = max(st.FinishedAt.Sub(*st.StartedAt), 0)
		}
		m.jobs.Ended(kind, st.State, ran)
	case st.State == jobstore.Queued && wasState == jobstore.Running:
		// An attempt ended and the job is to run again: its run time
		// is in its attempts.
		ran := time.Duration(-1)
		if n := len(st.Attempts); n > 0 && st.Attempts[n-1].StartedAt != nil {
			a := st.Attempts[n-1]
			ran = max(a.EndedAt.Sub(*a.StartedAt), 0)
		}
		m.jobs.Ended(kind, jobstore.Queued, ran)
	}
}

// tableCollector is the gauges counted from the table at each scrape.
type tableCollector struct {
	t       *jobTable
	hub     *eventHub
	started time.Time

	jobs, oldest, readable, streams, dropped, start *prometheus.Desc
}

func newTableCollector(t *jobTable, hub *eventHub, started time.Time) *tableCollector {
	return &tableCollector{t: t, hub: hub, started: started,
		jobs: prometheus.NewDesc("jobstore_jobs",
			"Jobs under the root by state (a status's state, unreadable, or none before the first status) and kind.", []string{"state", "kind"}, nil),
		oldest: prometheus.NewDesc("jobstore_oldest_queued_age_seconds",
			"Age of the oldest queued job by kind, from its submitted_at.", []string{"kind"}, nil),
		readable: prometheus.NewDesc("jobstore_root_readable", "1 while the root can be read, 0 while it cannot.", nil, nil),
		streams:  prometheus.NewDesc("jobstore_serve_event_streams", "Event streams (pages) connected now.", nil, nil),
		dropped: prometheus.NewDesc("jobstore_serve_events_dropped_total",
			"Events dropped for pages that did not keep up (each such page reloads its rows).", nil, nil),
		start: prometheus.NewDesc("jobstore_serve_start_time_seconds", "When the server started, in seconds since the Unix epoch.", nil, nil),
	}
}

func (c *tableCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.jobs, c.oldest, c.readable, c.streams, c.dropped, c.start} {
		ch <- d
	}
}

func (c *tableCollector) Collect(ch chan<- prometheus.Metric) {
	entries, _, rootErr := c.t.snapshot()
	type key struct{ state, kind string }
	jobs := map[key]int{}
	kinds := map[string]bool{}
	oldest := map[string]time.Time{}
	for _, en := range entries {
		kind := "?"
		if en.Spec != nil {
			kind = en.Spec.Kind
		}
		kinds[kind] = true
		state := jobview.EntryState(en)
		jobs[key{state, kind}]++
		if state == string(jobstore.Queued) && en.Spec != nil {
			if o, ok := oldest[kind]; !ok || en.Spec.SubmittedAt.Before(o) {
				oldest[kind] = en.Spec.SubmittedAt
			}
		}
	}
	// Every state of every kind present, at 0 when no job is in it.
	for kind := range kinds {
		for _, s := range append(jobview.StateNames(), jobview.UnreadableState, jobview.NoStatusState) {
			ch <- prometheus.MustNewConstMetric(c.jobs, prometheus.GaugeValue, float64(jobs[key{s, kind}]), s, kind)
		}
	}
	now := time.Now()
	for kind, at := range oldest {
		ch <- prometheus.MustNewConstMetric(c.oldest, prometheus.GaugeValue, now.Sub(at).Seconds(), kind)
	}
	up := 1.0
	if rootErr != nil {
		up = 0
	}
	ch <- prometheus.MustNewConstMetric(c.readable, prometheus.GaugeValue, up)
	ch <- prometheus.MustNewConstMetric(c.streams, prometheus.GaugeValue, float64(c.hub.count()))
	ch <- prometheus.MustNewConstMetric(c.dropped, prometheus.CounterValue, float64(c.hub.dropped.Load()))
	ch <- prometheus.MustNewConstMetric(c.start, prometheus.GaugeValue, float64(c.started.UnixNano())/1e9)
}

// metricsHandler serves the metrics of s's registry.
func (s *server) metricsHandler() http.Handler {
	return promhttp.HandlerFor(s.table.metrics.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}
