package main

import (
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/axqua/jobstore"
)

// This file is serve's /metrics, in the Prometheus text format (version
// 0.0.4). Gauges are counted from the table at each scrape; counters and
// the histogram from the changes WatchRoot delivered since the server
// started (docs/cli.md says how each is derived).

// durationBuckets are the histogram's upper bounds, in seconds.
var durationBuckets = [...]float64{1, 5, 15, 60, 300, 900, 3600, 4 * 3600, 12 * 3600, 24 * 3600}

// serveMetrics are the counters since the server started.
type serveMetrics struct {
	mu       sync.Mutex
	started  time.Time
	starts   map[string]uint64 // by kind
	rescues  map[string]uint64
	retries  map[string]uint64
	failures map[string]uint64
	buckets  [len(durationBuckets)]uint64
	count    uint64
	sum      float64
}

func newServeMetrics() *serveMetrics {
	return &serveMetrics{started: time.Now(), starts: map[string]uint64{}, rescues: map[string]uint64{},
		retries: map[string]uint64{}, failures: map[string]uint64{}}
}

// observe counts what changed from prev (nil: a job new to the server) to
// j, a job's next record as WatchRoot delivered it.
func (m *serveMetrics) observe(prev, j *watchedJob) {
	st := j.status
	if st == nil {
		return
	}
	var was *jobstore.JobStatus
	if prev != nil {
		was = prev.status
	}
	if was != nil && was.Seq == st.Seq && was.Attempt == st.Attempt && was.State == st.State {
		return // the same record (a cancel request or a readable record again)
	}
	kind := "?"
	if j.spec != nil {
		kind = j.spec.Kind
	}
	wasState := jobstore.State("")
	if was != nil {
		wasState = was.State
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	// A start: a started_at not seen before (a start whose running
	// record was skipped, the latest record winning, counts too).
	if st.StartedAt != nil && (was == nil || was.StartedAt == nil || !was.StartedAt.Equal(*st.StartedAt) || was.Attempt != st.Attempt) {
		m.starts[kind]++
	}
	// A retry: a job that had ended is queued or running again.
	if wasState.Terminal() && !st.State.Terminal() {
		m.retries[kind]++
	}
	if st.State != wasState {
		switch st.State {
		case jobstore.Failed:
			m.failures[kind]++
		case jobstore.Lost: // its runner judged gone and the job rescued from it
			m.rescues[kind]++
		}
	}
	if st.State.Terminal() && !wasState.Terminal() && st.StartedAt != nil && st.FinishedAt != nil {
		d := max(st.FinishedAt.Sub(*st.StartedAt).Seconds(), 0)
		for i, le := range durationBuckets {
			if d <= le {
				m.buckets[i]++
			}
		}
		m.count++
		m.sum += d
	}
}

// writeMetrics writes the metrics of t in the Prometheus text format.
func writeMetrics(w io.Writer, t *jobTable, hub *eventHub, now time.Time) {
	entries, _, rootErr := t.snapshot()
	type key struct{ state, kind string }
	jobs := map[key]int{}
	oldest := map[string]time.Time{}
	for _, en := range entries {
		kind := "?"
		if en.Spec != nil {
			kind = en.Spec.Kind
		}
		state := entryState(en)
		jobs[key{state, kind}]++
		if state == string(jobstore.Queued) && en.Spec != nil {
			if o, ok := oldest[kind]; !ok || en.Spec.SubmittedAt.Before(o) {
				oldest[kind] = en.Spec.SubmittedAt
			}
		}
	}
	fmt.Fprintln(w, "# HELP jobstore_jobs Jobs under the root by state (a status's state, unreadable, or none before the first status) and kind.")
	fmt.Fprintln(w, "# TYPE jobstore_jobs gauge")
	keys := slices.SortedFunc(maps.Keys(jobs), func(a, b key) int {
		return strings.Compare(a.state+"\x00"+a.kind, b.state+"\x00"+b.kind)
	})
	for _, k := range keys {
		fmt.Fprintf(w, "jobstore_jobs{state=%s,kind=%s} %d\n", promLabel(k.state), promLabel(k.kind), jobs[k])
	}
	fmt.Fprintln(w, "# HELP jobstore_oldest_queued_age_seconds Age of the oldest queued job by kind, from its submitted_at.")
	fmt.Fprintln(w, "# TYPE jobstore_oldest_queued_age_seconds gauge")
	for _, kind := range slices.Sorted(maps.Keys(oldest)) {
		fmt.Fprintf(w, "jobstore_oldest_queued_age_seconds{kind=%s} %s\n", promLabel(kind), promFloat(now.Sub(oldest[kind]).Seconds()))
	}
	up := 1
	if rootErr != nil {
		up = 0
	}
	fmt.Fprintln(w, "# HELP jobstore_root_readable 1 while the root can be read, 0 while it cannot.")
	fmt.Fprintln(w, "# TYPE jobstore_root_readable gauge")
	fmt.Fprintf(w, "jobstore_root_readable %d\n", up)

	m := t.metrics
	m.mu.Lock()
	defer m.mu.Unlock()
	counter := func(name, help string, by map[string]uint64) {
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s counter\n", name, help, name)
		for _, kind := range slices.Sorted(maps.Keys(by)) {
			fmt.Fprintf(w, "%s{kind=%s} %d\n", name, promLabel(kind), by[kind])
		}
	}
	counter("jobstore_job_starts_total", "Runs started since the server started: a status with a started_at (or attempt) not seen before.", m.starts)
	counter("jobstore_job_rescues_total", "Jobs marked lost since the server started: their runner was judged gone and the job taken from it.", m.rescues)
	counter("jobstore_job_retries_total", "Jobs queued or running again after they had ended, since the server started.", m.retries)
	counter("jobstore_job_failures_total", "Jobs that ended failed since the server started.", m.failures)
	fmt.Fprintln(w, "# HELP jobstore_job_duration_seconds Run time (finished_at - started_at) of the jobs seen ending since the server started.")
	fmt.Fprintln(w, "# TYPE jobstore_job_duration_seconds histogram")
	for i, le := range durationBuckets {
		fmt.Fprintf(w, "jobstore_job_duration_seconds_bucket{le=%q} %d\n", promFloat(le), m.buckets[i])
	}
	fmt.Fprintf(w, "jobstore_job_duration_seconds_bucket{le=\"+Inf\"} %d\n", m.count)
	fmt.Fprintf(w, "jobstore_job_duration_seconds_sum %s\n", promFloat(m.sum))
	fmt.Fprintf(w, "jobstore_job_duration_seconds_count %d\n", m.count)
	fmt.Fprintln(w, "# HELP jobstore_serve_event_streams Event streams (pages) connected now.")
	fmt.Fprintln(w, "# TYPE jobstore_serve_event_streams gauge")
	fmt.Fprintf(w, "jobstore_serve_event_streams %d\n", hub.count())
	fmt.Fprintln(w, "# HELP jobstore_serve_events_dropped_total Events dropped for pages that did not keep up (each such page reloads its rows).")
	fmt.Fprintln(w, "# TYPE jobstore_serve_events_dropped_total counter")
	fmt.Fprintf(w, "jobstore_serve_events_dropped_total %d\n", hub.dropped.Load())
	fmt.Fprintln(w, "# HELP jobstore_serve_start_time_seconds When the server started, in seconds since the Unix epoch.")
	fmt.Fprintln(w, "# TYPE jobstore_serve_start_time_seconds gauge")
	fmt.Fprintf(w, "jobstore_serve_start_time_seconds %s\n", promFloat(float64(m.started.UnixNano())/1e9))
}

// promLabel is s as a quoted label value of the text format: backslash,
// double quote and newline escaped, and the bytes that are not valid
// UTF-8 replaced.
func promLabel(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}

// promFloat is f as the text format writes a number.
func promFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "+Inf"
	case math.IsInf(f, -1):
		return "-Inf"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}
