package serve

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/clitest"
	"github.com/axqua/jobstore/internal/testdir"
	"github.com/stretchr/testify/require"
)

// scheduleLead is how far ahead the schedule tests put a job's due time:
// far enough that it stays ahead while a test runs.
const scheduleLead = 2 * time.Hour

// scheduleRoot is a root with a job of each schedule: one not yet due
// (its not_before), one whose retry is pending, one queued to run at
// once, one running.
func scheduleRoot(t *testing.T) string {
	t.Helper()
	root := testdir.New(t)
	_, err := jobstore.Submit(root, jobstore.JobSpec{ID: "a-later", Kind: "render",
		NotBefore: jobstore.Now().Add(scheduleLead), Priority: 5, MaxAttempts: 3})
	require.NoError(t, err)
	dir, err := jobstore.Submit(root, jobstore.JobSpec{ID: "b-retry", Kind: "render", MaxAttempts: 3})
	require.NoError(t, err)
	started, ended, due := jobstore.Now().Add(-time.Minute), jobstore.Now(), jobstore.Now().Add(scheduleLead)
	require.NoError(t, jobstore.WriteStatus(dir, jobstore.JobStatus{State: jobstore.Queued, Seq: 3, Attempt: 1, RetryAt: &due,
		Attempts: []jobstore.AttemptEnd{{Attempt: 1, State: jobstore.Failed, StartedAt: &started, EndedAt: ended, Error: "boom"}}}))
	clitest.Submit(t, root, "c-now")
	run, err := jobstore.Start(clitest.Submit(t, root, "d-running"), jobstore.WithProgressInterval(0))
	require.NoError(t, err)
	t.Cleanup(func() { run.Close() })
	return root
}

func TestServe_RowsCarryTheSchedule(t *testing.T) {
	ts := startServer(t, scheduleRoot(t), false)
	code, body := ts.get(t, "/api/rows")
	require.Equal(t, http.StatusOK, code, body)
	var page rowsPage
	require.NoError(t, json.Unmarshal([]byte(body), &page))
	rows := map[string]pageRow{}
	for _, r := range page.Rows {
		rows[r.ID] = r
	}
	for _, c := range []struct {
		id                 string
		due, retrying      bool
		priority, attempts int
	}{
		{"a-later", true, false, 5, 3},
		{"b-retry", true, true, 0, 3},
		{"c-now", false, false, 0, 0},
		{"d-running", false, false, 0, 0},
	} {
		t.Run(c.id, func(t *testing.T) {
			r, ok := rows[c.id]
			require.True(t, ok)
			require.Equal(t, c.due, r.Due != nil, "due")
			if c.due {
				require.WithinDuration(t, time.Now().Add(scheduleLead), *r.Due, time.Minute)
			}
			require.Equal(t, c.retrying, r.Retrying, "retrying")
			require.Equal(t, c.priority, r.Priority, "priority")
			require.Equal(t, c.attempts, r.MaxAttempts, "max attempts")
		})
	}
	require.Equal(t, 1, page.Counts["scheduled"], "counts")
	require.Equal(t, 1, page.Counts["retrying"], "counts")
}

func TestServe_PagesSayWhenAJobIsDue(t *testing.T) {
	ts := startServer(t, scheduleRoot(t), false)
	code, body := ts.get(t, "/")
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, body, ">due in 1h59m<", "the list says when a-later is due")
	require.Contains(t, body, ">retry due in 1h59m<", "the list says when b-retry's retry is due")
	require.Contains(t, body, "1/3", "the list shows the attempt of the most")
	require.Contains(t, body, "priority 5")

	code, body = ts.get(t, "/jobs/a-later")
	require.Equal(t, http.StatusOK, code, body)
	for _, want := range []string{">due in 1h59m<", `<dd id="priority">5</dd>`, `<dd id="max-attempts">3</dd>`, `id="not-before"`} {
		require.Contains(t, body, want)
	}
	code, body = ts.get(t, "/jobs/b-retry")
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, body, ">retry due in 1h59m<")
	require.Contains(t, body, `id="retry-at"`)
}

func TestServe_FiltersBySchedule(t *testing.T) {
	ts := startServer(t, scheduleRoot(t), false)
	for _, c := range []struct {
		state string
		want  []string
	}{
		{"scheduled", []string{"a-later"}},
		{"retrying", []string{"b-retry"}},
		{"queued", []string{"a-later", "b-retry", "c-now"}},
		{"", []string{"a-later", "b-retry", "c-now", "d-running"}},
	} {
		t.Run("state="+c.state, func(t *testing.T) {
			code, body := ts.get(t, "/api/rows?state="+c.state)
			require.Equal(t, http.StatusOK, code, body)
			var page rowsPage
			require.NoError(t, json.Unmarshal([]byte(body), &page))
			var ids []string
			for _, r := range page.Rows {
				ids = append(ids, r.ID)
			}
			require.ElementsMatch(t, c.want, ids)
			require.Equal(t, len(c.want), page.Matched)
			_, html := ts.get(t, "/?state="+c.state)
			require.Equal(t, len(c.want), strings.Count(html, "<tr data-id="), "the page's rows")
		})
	}
}
