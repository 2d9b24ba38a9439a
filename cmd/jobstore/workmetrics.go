package main

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/jobmetrics"
	"github.com/axqua/jobstore/cmd/jobstore/internal/remedy"
	"github.com/axqua/jobstore/cmd/jobstore/internal/serve"
)

// This file is "work --metrics": a worker's own metrics (the jobs it
// took, how their attempts ended, their run time and queue wait, how many
// run now, and the process's), served at /metrics for a fleet's scraper.

// workMetrics are a worker's metrics; a nil *workMetrics counts nothing.
type workMetrics struct {
	reg     *prometheus.Registry
	jobs    *jobmetrics.JobMetrics
	running prometheus.Gauge
}

// newWorkMetrics makes a worker's metrics, with the series of kinds (its
// --kind) declared at 0.
func newWorkMetrics(kinds []string) *workMetrics {
	reg := prometheus.NewRegistry()
	m := &workMetrics{reg: reg, jobs: jobmetrics.NewJobMetrics(reg, "Jobs this worker took (each attempt it started)."),
		running: prometheus.NewGauge(prometheus.GaugeOpts{Name: "jobstore_worker_running_jobs", Help: "Jobs this worker runs now."})}
	reg.MustRegister(m.running)
	jobmetrics.ProcessCollectors(reg)
	for _, k := range kinds {
		m.jobs.Declare(k)
	}
	return m
}

// started counts run's start.
func (m *workMetrics) started(run *jobstore.Run) {
	if m == nil {
		return
	}
	spec, st := run.Spec(), run.Status()
	wait := time.Duration(0)
	if st.StartedAt != nil {
		wait = st.StartedAt.Sub(jobmetrics.ReadyAt(&spec, &st, nil))
	}
	m.jobs.Started(spec.Kind, wait)
	m.running.Inc()
}

// ended counts how run's attempt ended; an end that could not be recorded
// counts in no state.
func (m *workMetrics) ended(run *jobstore.Run, end jobEnd) {
	if m == nil {
		return
	}
	m.running.Dec()
	state := end.shownState()
	if state == "" {
		return
	}
	ran := time.Duration(-1)
	if end.ran > 0 {
		ran = end.ran
	}
	m.jobs.Ended(run.Spec().Kind, jobstore.State(state), ran)
}

// serveWorkMetrics listens on addr and serves m at /metrics until stop is
// called; it returns the address listened on.
func serveWorkMetrics(m *workMetrics, addr string) (bound net.Addr, stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, remedy.WithCLIRemedy(&jobstore.Error{Op: "listen", Path: addr, Msg: "cannot listen for --metrics", Err: err},
			"give another --metrics address, or port 0 for a free one")
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}))
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: serve.HeaderTimeout, ReadTimeout: serve.ReadTimeout,
		WriteTimeout: serve.WriteTimeout, IdleTimeout: serve.IdleTimeout, MaxHeaderBytes: 64 << 10}
	served := make(chan struct{})
	go func() {
		defer close(served)
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return // the listener failed: scrapes fail, the worker goes on
		}
	}()
	return ln.Addr(), func() {
		ctx, cancel := context.WithTimeout(context.Background(), serve.ShutdownWait)
		defer cancel()
		hs.Shutdown(ctx)
		<-served
	}, nil
}
