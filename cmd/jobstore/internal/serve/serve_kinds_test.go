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

func TestSummarize_CountsByKindAndEndsPerBar(t *testing.T) {
	now := time.Date(2026, 12, 6, 14, 7, 30, 0, time.UTC) // in the bar 14:05-14:10
	entry := func(id, kind string, state jobstore.State, ago time.Duration) jobstore.Entry {
		en := jobstore.Entry{Dir: jobstore.JobDir("/r/" + id), Spec: &jobstore.JobSpec{ID: id, Kind: kind},
			Status: &jobstore.JobStatus{State: state}}
		if state.Terminal() {
			at := now.Add(-ago)
			en.Status.FinishedAt = &at
		}
		return en
	}
	p := summarize([]jobstore.Entry{
		entry("a", "render", jobstore.Succeeded, time.Minute),    // the last bar
		entry("b", "render", jobstore.Failed, 2*time.Minute),     // the last bar
		entry("c", "render", jobstore.Lost, 10*time.Minute),      // 13:57:30: the bar 13:55-14:00
		entry("d", "render", jobstore.Succeeded, 2*time.Hour),    // before the window
		entry("e", "encode", jobstore.Running, 0),                // not ended
		entry("f", "encode", jobstore.Succeeded, 62*time.Minute), // 13:05:30: before the first bar (13:10)
		entry("g", "encode", jobstore.Succeeded, 57*time.Minute), // 13:10:30: the first bar
		entry("h", "encode", jobstore.Cancelled, -time.Minute),   // finished in the future: a clock ahead
		{Dir: "/r/i", Err: jobstore.ErrInvalid},                  // unreadable, no kind
	}, now)
	require.Equal(t, time.Date(2026, 12, 6, 13, 10, 0, 0, time.UTC), p.Since)
	require.Equal(t, []string{"?", "encode", "render"}, []string{p.Kinds[0].Kind, p.Kinds[1].Kind, p.Kinds[2].Kind})
	render, encode := p.Kinds[2], p.Kinds[1]
	for _, c := range []struct {
		name        string
		got         kindSummary
		total       int
		state       string
		n           int
		ended, fail []int // index, count pairs
		sums        [2]int
	}{
		{"render", render, 4, "succeeded", 2, []int{summaryBars - 1, 2, summaryBars - 3, 1}, []int{summaryBars - 1, 1, summaryBars - 3, 1}, [2]int{3, 2}},
		{"encode", encode, 4, "running", 1, []int{0, 1}, nil, [2]int{1, 0}},
		{"every kind", p.All, 9, "unreadable", 1, []int{0, 1, summaryBars - 1, 2, summaryBars - 3, 1}, []int{summaryBars - 1, 1, summaryBars - 3, 1}, [2]int{4, 2}},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.total, c.got.Total)
			require.Equal(t, c.n, c.got.Counts[c.state])
			want := make([]int, summaryBars)
			for i := 0; i < len(c.ended); i += 2 {
				want[c.ended[i]] = c.ended[i+1]
			}
			require.Equal(t, want, c.got.Ended, "ended per bar")
			want = make([]int, summaryBars)
			for i := 0; i < len(c.fail); i += 2 {
				want[c.fail[i]] = c.fail[i+1]
			}
			require.Equal(t, want, c.got.Failed, "failed per bar")
			require.Equal(t, c.sums, [2]int{c.got.EndedSum, c.got.FailedSum})
			require.Len(t, c.got.Bars, summaryBars)
		})
	}
	last := render.Bars[summaryBars-1]
	require.Equal(t, sparkHeight, last.H, "the busiest bar is full height")
	require.Equal(t, sparkHeight/2, last.FH, "one failure of two ends: half of it")
	require.Equal(t, "14:05–14:10 UTC: 2 ends, 1 failure", last.Title)
	require.Zero(t, render.Bars[0].H, "an empty bar")
}

func TestServe_KindsPageAndAPI(t *testing.T) {
	root := testdir.New(t)
	clitest.RunJob(t, root, "a-ok", jobstore.Outcome{State: jobstore.Succeeded})
	clitest.RunJob(t, root, "b-bad", jobstore.Outcome{State: jobstore.Failed})
	const evil = `<img src=x onerror=alert(1)>`
	_, err := jobstore.Submit(root, jobstore.JobSpec{ID: "c-evil", Kind: evil})
	require.NoError(t, err)
	ts := startServer(t, root, false)

	code, body := ts.get(t, "/api/kinds")
	require.Equal(t, http.StatusOK, code, body)
	var p kindsPage
	require.NoError(t, json.Unmarshal([]byte(body), &p))
	require.Equal(t, 3, p.All.Total)
	require.Equal(t, 2, p.All.EndedSum)
	require.Equal(t, 1, p.All.FailedSum)
	require.Len(t, p.Kinds, 2)

	code, body = ts.get(t, "/kinds")
	require.Equal(t, http.StatusOK, code, body)
	require.NotContains(t, body, evil, "the kind is escaped")
	require.Contains(t, body, "&lt;img src=x onerror=alert(1)&gt;")
	require.Equal(t, 3, strings.Count(body, `<svg class="spark"`), "a chart a line, every kind's first")
	require.Contains(t, body, `<b class="ended-sum">2</b> ended, <b class="failed-sum">1</b> failed`)
}
