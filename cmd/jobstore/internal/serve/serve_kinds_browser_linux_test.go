package serve

import (
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/clitest"
	"github.com/axqua/jobstore/internal/testdir"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// kindsRefresh bounds how soon the summary by kind shows a change: its
// script loads it every 5 s.
const kindsRefresh = 3 * 5 * time.Second

func TestServeBrowser_KindsSummaryFollowsTheEnds(t *testing.T) {
	tab := newTab(t)
	root := testdir.New(t)
	const evil = `<img src=x onerror=alert(1)>`
	for _, id := range []string{"a-1", "a-2", "a-3"} {
		clitest.RunJob(t, root, id, jobstore.Outcome{State: jobstore.Succeeded})
	}
	clitest.RunJob(t, root, "b-bad", jobstore.Outcome{State: jobstore.Failed, Error: "boom"})
	_, err := jobstore.Submit(root, jobstore.JobSpec{ID: "c-evil", Kind: evil})
	require.NoError(t, err)
	ts := startServer(t, root, false)
	seen := dialogs(tab)

	runIn(t, tab, chromedp.Navigate(ts.base+"/kinds?token="+testToken))
	waitDOM(t, tab, browserWait, `document.querySelectorAll("#kind-rows svg.spark").length === 3`, "a chart a line")
	clitest.RunJob(t, root, "d-more", jobstore.Outcome{State: jobstore.Failed})
	waitDOM(t, tab, kindsRefresh, `document.querySelector('tr.all .failed-sum').textContent === "2"`, "the page follows the ends")
	require.Equal(t, evil, eval[string](t, tab, `[...document.querySelectorAll("#kind-rows td.kind")].map(td => td.textContent).find(k => k.startsWith("<"))`),
		"the kind is shown as text")
	require.Zero(t, eval[int](t, tab, `document.querySelectorAll("img").length`))
	screenshots(t, tab, "kinds")
	require.Zero(t, seen.Load(), "a dialog was opened")
}
