package main

import (
	"net"
	"net/http"
	"os"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/clitest"
	"github.com/axqua/jobstore/cmd/jobstore/internal/jobmetrics"
	"github.com/axqua/jobstore/internal/testdir"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"
)

var metricsAddrRE = regexp.MustCompile(`metrics at (http://\S+/metrics)`)

// scrapeURL reads url with the Prometheus text parser.
func scrapeURL(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	c := &http.Client{Timeout: clitest.Timeout}
	res, err := c.Get(url)
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	return clitest.ParseExposition(t, res.Body)
}

// A worker started with --metrics serves its own metrics: the series of
// its --kind exist before any job, and after its jobs ran they count the
// starts, the ends by state, the run times and the queue waits.
func TestWork_MetricsCountTheJobsItRan(t *testing.T) {
	root := testdir.New(t)
	w := startWorker(t, "echo", nil, root, "--kind", "k", "--kind", "idle", "--metrics", "127.0.0.1:0", "--scan", "50ms")
	var url string
	clitest.WaitUntil(t, "the worker names its metrics address", func() bool {
		m := metricsAddrRE.FindStringSubmatch(w.stderr.String())
		if m != nil {
			url = m[1]
		}
		return m != nil
	})
	fams := scrapeURL(t, url)
	for _, state := range jobmetrics.EndStates() {
		v, ok := clitest.MetricValue(fams, "jobstore_jobs_finished_total", "kind", "idle", "state", string(state))
		require.True(t, ok, "the series of kind idle, state %s, exist before any job", state)
		require.Zero(t, v)
	}
	require.Contains(t, fams, "go_goroutines")
	if runtime.GOOS == "linux" { // where the process collector has every metric
		require.Contains(t, fams, "process_start_time_seconds")
	}

	ok := submitKind(t, root, "a-ok", "k", `{}`)
	bad := submitKind(t, root, "b-bad", "k", `{"exit": 3}`)
	later, err := jobstore.Submit(root, jobstore.JobSpec{ID: "c-later", Kind: "k", NotBefore: jobstore.Now().Add(time.Hour)})
	require.NoError(t, err)
	for _, d := range []jobstore.JobDir{ok, bad} {
		waitEnded(t, d)
	}
	// The end is counted after the end line is printed, which follows
	// the status written: wait for the count, not the file.
	clitest.WaitUntil(t, "the worker counts both ends", func() bool {
		v, _ := clitest.MetricValue(scrapeURL(t, url), "jobstore_job_duration_seconds", "kind", "k")
		return v == 2
	})
	fams = scrapeURL(t, url)
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"jobstore_job_starts_total", []string{"kind", "k"}, 2},
		{"jobstore_jobs_finished_total", []string{"kind", "k", "state", "succeeded"}, 1},
		{"jobstore_jobs_finished_total", []string{"kind", "k", "state", "failed"}, 1},
		{"jobstore_jobs_finished_total", []string{"kind", "k", "state", "queued"}, 0},
		{"jobstore_job_queue_wait_seconds", []string{"kind", "k"}, 2},
		{"jobstore_job_duration_seconds", []string{"kind", "k"}, 2},
		{"jobstore_worker_running_jobs", nil, 0},
		{"jobstore_job_starts_total", []string{"kind", "idle"}, 0},
	} {
		got, found := clitest.MetricValue(fams, c.name, c.labels...)
		require.True(t, found, "%s%v", c.name, c.labels)
		require.Equal(t, c.want, got, "%s%v", c.name, c.labels)
	}
	require.Equal(t, jobstore.Queued, status(t, later).State, "the job not yet due was not taken")
	require.False(t, strings.Contains(w.stdout.String(), "metrics"), "stdout holds the job lines only")
}

// A --metrics address that cannot be listened on stops the worker before
// it takes a job.
func TestWork_MetricsAddressInUseIsExit3(t *testing.T) {
	root := testdir.New(t)
	dir := submitKind(t, root, "a", "k", `{}`)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	self, err := os.Executable()
	require.NoError(t, err)
	r := runCLI(t, "work", root, "--until-empty", "--metrics", ln.Addr().String(), "--", self)
	requireCode(t, r, exitRuntime)
	requireErrorLine(t, r)
	require.Contains(t, r.stderr, "cannot listen for --metrics")
	require.Equal(t, jobstore.Queued, status(t, dir).State, "no job taken")
}
