package jobmetrics

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

// EndStates are the states an attempt ends in, as the ends counter labels
// them: a final state, or queued when the job is to run again (a retry,
// or an attempt its worker's stop interrupted).
func EndStates() []jobstore.State {
	return []jobstore.State{jobstore.Queued, jobstore.Succeeded, jobstore.Failed, jobstore.Cancelled, jobstore.Lost}
}

// maxDeclaredKinds is the most kinds whose series are declared ahead; a
// later kind's series appear with their first event.
const maxDeclaredKinds = 500

// JobMetrics are the counters and histograms of job starts and ends.
type JobMetrics struct {
	Starts    *prometheus.CounterVec   // kind
	Ends      *prometheus.CounterVec   // kind, state
	Duration  *prometheus.HistogramVec // kind
	QueueWait *prometheus.HistogramVec // kind

	mu    sync.Mutex
	kinds map[string]bool // declared
}

// NewJobMetrics makes the job metrics and registers them with reg; what
// counts a start and an end is the caller's (docs/cli.md).
func NewJobMetrics(reg prometheus.Registerer, startsHelp string) *JobMetrics {
	m := &JobMetrics{
		Starts: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "jobstore_job_starts_total", Help: startsHelp}, []string{"kind"}),
		Ends: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "jobstore_jobs_finished_total",
			Help: "Attempts that ended, by the job's state after: a final state, or queued when it is to run again."}, []string{"kind", "state"}),
		Duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "jobstore_job_duration_seconds",
			Help: "Run time of the attempts that ended (finished_at - started_at).", Buckets: durationBuckets()}, []string{"kind"}),
		QueueWait: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "jobstore_job_queue_wait_seconds",
			Help: "Time from when a job could start (submitted_at, not_before, its retry's due time) to its start.", Buckets: waitBuckets()}, []string{"kind"}),
		kinds: map[string]bool{},
	}
	reg.MustRegister(m.Starts, m.Ends, m.Duration, m.QueueWait)
	return m
}

// Declare makes kind's series exist, at 0 (up to maxDeclaredKinds kinds).
func (m *JobMetrics) Declare(kind string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.kinds[kind] || len(m.kinds) >= maxDeclaredKinds {
		return
	}
	m.kinds[kind] = true
	m.Starts.WithLabelValues(kind)
	for _, s := range EndStates() {
		m.Ends.WithLabelValues(kind, string(s))
	}
	m.Duration.WithLabelValues(kind)
	m.QueueWait.WithLabelValues(kind)
}

// Started counts a start of a job of kind that waited wait.
func (m *JobMetrics) Started(kind string, wait time.Duration) {
	m.Declare(kind)
	m.Starts.WithLabelValues(kind).Inc()
	m.QueueWait.WithLabelValues(kind).Observe(max(wait.Seconds(), 0))
}

// Ended counts an attempt of a job of kind that ended in state after ran
// (ran < 0: unknown, no run time observed).
func (m *JobMetrics) Ended(kind string, state jobstore.State, ran time.Duration) {
	m.Declare(kind)
	m.Ends.WithLabelValues(kind, string(state)).Inc()
	if ran >= 0 {
		m.Duration.WithLabelValues(kind).Observe(ran.Seconds())
	}
}

// ReadyAt is when a job could first start for the attempt that started
// at its status's started_at: the latest of its submitted_at, its
// not_before, and, for a later attempt, its retry's due time (retryAt,
// when known) or else the end of its attempt before.
func ReadyAt(spec *jobstore.JobSpec, st *jobstore.JobStatus, retryAt *time.Time) time.Time {
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

// ProcessCollectors registers the Go runtime's and the process's
// collectors (go_*, process_*) with reg.
func ProcessCollectors(reg prometheus.Registerer) {
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
}
