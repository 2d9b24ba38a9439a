package serve

import (
	"context"
	"testing"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/clitest"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// Screen sizes the pages are looked at in: a laptop and a phone.
const (
	wideWidth, wideHeight   = 1280, 900
	phoneWidth, phoneHeight = 390, 844
)

// screenshots saves the page as name-wide.png and name-phone.png.
func screenshots(t *testing.T, tab context.Context, name string) {
	t.Helper()
	runIn(t, tab, chromedp.EmulateViewport(wideWidth, wideHeight))
	screenshot(t, tab, name+"-wide.png")
	runIn(t, tab, chromedp.EmulateViewport(phoneWidth, phoneHeight, chromedp.EmulateMobile))
	screenshot(t, tab, name+"-phone.png")
	runIn(t, tab, chromedp.EmulateViewport(wideWidth, wideHeight))
}

func TestServeBrowser_RowAndBulkActionsFromTheList(t *testing.T) {
	tab := newTab(t)
	root := scheduleRoot(t)
	failed := clitest.RunJob(t, root, "e-failed", jobstore.Outcome{State: jobstore.Failed, Error: "frame 15: disk full"})
	done := clitest.RunJob(t, root, "f-done", jobstore.Outcome{State: jobstore.Succeeded, Message: "all frames"})
	ts := startServer(t, root, false)
	seen := dialogs(tab)

	openPage(t, tab, ts, "/")
	require.Equal(t, "due in 1h59m", eval[string](t, tab, `document.querySelector('tr[data-id="a-later"] .due').textContent`))
	require.Equal(t, "retry due in 1h59m", eval[string](t, tab, `document.querySelector('tr[data-id="b-retry"] .due').textContent`))
	screenshots(t, tab, "list-actions")

	// Rows the page's script builds (jobs that came after the page) carry
	// the same schedule, checkbox and buttons.
	clitest.RunJob(t, root, "g-failed-later", jobstore.Outcome{State: jobstore.Failed})
	_, err := jobstore.Submit(root, jobstore.JobSpec{ID: "h-later", Kind: "render", NotBefore: jobstore.Now().Add(scheduleLead), MaxAttempts: 2})
	require.NoError(t, err)
	waitDOM(t, tab, browserWait, `document.querySelector('tr[data-id="h-later"]') && document.querySelector('tr[data-id="g-failed-later"]')`,
		"the new rows are shown")
	for _, c := range []struct{ expr, want string }{
		{`document.querySelector('tr[data-id="h-later"] .due').textContent`, "due in 1h59m"},
		{`document.querySelector('tr[data-id="h-later"] td.attempt').textContent`, "0/2"},
		{`[...document.querySelectorAll('tr[data-id="g-failed-later"] button')].map(b => b.dataset.action).join(",")`, "retry,remove"},
		{`document.querySelector('tr[data-id="g-failed-later"] td.pick input').getAttribute("form")`, "bulk"},
		{`[...document.querySelectorAll('tr[data-id="h-later"] button')].map(b => b.getAttribute("formaction")).join(",")`, "/jobs/h-later/cancel"},
	} {
		require.Equal(t, c.want, eval[string](t, tab, c.expr), c.expr)
	}

	// A row's retry: back on the same list, the job queued again.
	click(t, tab, `tr[data-id="e-failed"] button[data-action="retry"]`)
	waitDOM(t, tab, browserWait, `document.querySelector(".flash") && document.querySelector(".flash").textContent === "queued job e-failed again"`,
		"the list says the job was retried")
	require.Equal(t, jobstore.Queued, stateOf(t, failed))

	// Remove selected: a confirmation, then what was done.
	waitDOM(t, tab, browserWait, `document.getElementById("live").dataset.state === "live"`, "the list is live again")
	click(t, tab, `tr[data-id="f-done"] td.pick input`)
	click(t, tab, `#remove-selected`)
	waitDOM(t, tab, browserWait, `document.getElementById("confirm")`, "the confirmation")
	require.DirExists(t, string(done), "nothing removed before the confirmation")
	screenshots(t, tab, "bulk-confirm")
	click(t, tab, `#confirm`)
	waitDOM(t, tab, browserWait, `document.getElementById("done") && document.getElementById("done").textContent.includes("f-done")`,
		"the summary names the removed job")
	require.NoDirExists(t, string(done))

	// The job's page leads back to the list it was opened from.
	runIn(t, tab, chromedp.Navigate(ts.base+"/?state=scheduled"))
	waitDOM(t, tab, browserWait, `document.getElementById("live").dataset.state === "live"`, "the list is live")
	click(t, tab, `tr[data-id="a-later"] td.id a`)
	waitDOM(t, tab, browserWait, `document.getElementById("back")`, "the job's page")
	require.Equal(t, "/?state=scheduled", eval[string](t, tab, `document.getElementById("back").getAttribute("href")`))
	screenshots(t, tab, "job-scheduled")
	require.Zero(t, seen.Load(), "a dialog was opened")
}
