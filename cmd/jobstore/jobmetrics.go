package main

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/axqua/jobstore"
)

// This file is the job metrics that serve and work both expose, in the
// same names: starts, ends by state, run time and queue wait, by kind.
// Each kind's series exist at 0 from the moment the kind is known, so
// that a rate or an alert on them has a series before the first event.

// durationBuckets are the run time histogram's upper bounds, in seconds.
func durationBuckets() []float64 {
	return []float64{1, 5, 15, 60, 300, 900, 3600, 4 * 3600, 12 * 3600, 24 * 3600}
}

// waitBuckets are the queue wait histogram's upper bounds, in seconds.
func waitBuckets() []float64 {
	return []float64{0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600, 4 * 3600, 24 * 3600}
}

// endStates are the states an attempt ends in, as the ends counter labels
// them: a final state, or queued when the job is to run again (a retry,
// or an attempt its worker's stop interrupted).
func endStates() []jobstore.State {
	return []jobstore.State{jobstore.Queued, jobstore.Succeeded, jobstore.Failed, jobstore.Cancelled, jobstore.Lost}
}

// maxDeclaredKinds is the most kinds whose series are declared ahead; a
// later kind's series appear with their first event.
const maxDeclaredKinds = 500

// jobMetrics are the counters and histograms of job starts and ends.
type jobMetrics struct {
	starts    *prometheus.CounterVec   // kind
	ends      *prometheus.CounterVec   // kind, state
	duration  *prometheus.HistogramVec // kind
	queueWait *prometheus.HistogramVec // kind

	mu    sync.Mutex
	kinds map[string]bool // declared
}

// newJobMetrics makes the job metrics and registers them with reg; what
// counts a start and an end is the caller's (docs/cli.md).
func newJobMetrics(reg prometheus.Registerer, startsHelp string) *jobMetrics {
	m := &jobMetrics{
		starts: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "jobstore_job_starts_total", Help: startsHelp}, []string{"kind"}),
		ends: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "jobstore_jobs_finished_total",
			Help: "Attempts that ended, by the job's state after: a final state, or queued when it is to run again."}, []string{"kind", "state"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "jobstore_job_duration_seconds",
			Help: "Run time of the attempts that ended (finished_at - started_at).", Buckets: durationBuckets()}, []string{"kind"}),
		queueWait: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "jobstore_job_queue_wait_seconds",
			Help: "Time from when a job could start (submitted_at, not_before, its retry's due time) to its start.", Buckets: waitBuckets()}, []string{"kind"}),
		kinds: map[string]bool{},
	}
	reg.MustRegister(m.starts, m.ends, m.duration, m.queueWait)
	return m
}

// declare makes kind's series exist, at 0 (up to maxDeclaredKinds kinds).
func (m *jobMetrics) declare(kind string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.kinds[kind] || len(m.kinds) >= maxDeclaredKinds {
		return
	}
	m.kinds[kind] = true
	m.starts.WithLabelValues(kind)
	for _, s := range endStates() {
		m.ends.WithLabelValues(kind, string(s))
	}
	m.duration.WithLabelValues(kind)
	m.queueWait.WithLabelValues(kind)
}

// started counts a start of a job of kind that waited wait.
func (m *jobMetrics) started(kind string, wait time.Duration) {
	m.declare(kind)
	m.starts.WithLabelValues(kind).Inc()
	m.queueWait.WithLabelValues(kind).Observe(max(wait.Seconds(), 0))
}

// ended counts an attempt of a job of kind that ended in state after ran
// (ran < 0: unknown, no run time observed).
func (m *jobMetrics) ended(kind string, state jobstore.State, ran time.Duration) {
	m.declare(kind)
	m.ends.WithLabelValues(kind, string(state)).Inc()
	if ran >= 0 {
		m.duration.WithLabelValues(kind).Observe(ran.Seconds())
	}
}

// readyAt is when a job could first start for the attempt that started
// at its status's started_at: the latest of its submitted_at, its
// not_before, and, for a later attempt, its retry's due time (retryAt,
// when known) or else the end of its attempt before.
func readyAt(spec *jobstore.JobSpec, st *jobstore.JobStatus, retryAt *time.Time) time.Time {
	var at time.Time
	if spec != nil {
		at = spec.SubmittedAt
		if spec.NotBefore.After(at) {
			at = spec.NotBefore
		}
	}
	if retryAt != nil {
		if retryAt.After(at) {
			at = *retryAt
		}
		return at
	}
	if st != nil && len(st.Attempts) > 0 {
		if end := st.Attempts[len(st.Attempts)-1].EndedAt; end.After(at) {
			at = end
		}
	}
	return at
}

// processCollectors registers the Go runtime's and the process's
// collectors (go_*, process_*) with reg.
func processCollectors(reg prometheus.Registerer) {
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
}
