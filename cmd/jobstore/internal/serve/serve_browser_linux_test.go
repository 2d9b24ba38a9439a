package serve

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/clitest"
	"github.com/axqua/jobstore/cmd/jobstore/internal/jobview"
	"github.com/axqua/jobstore/internal/testdir"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// These tests drive serve's pages in a real browser: Debian's chromium
// (.ci/install.sh installs it), headless, one instance shared by the
// tests, a tab each.

// liveUpdateBound is how soon a status written by a runner shows on an
// open page, as serve promises.
const liveUpdateBound = time.Second

// browserWait bounds one browser step (a page load, a click).
const browserWait = 20 * time.Second

// sharedBrowser is the browser the tests share, started by the first.
var sharedBrowser struct {
	once   sync.Once
	ctx    context.Context
	cancel context.CancelFunc
	dir    string
	err    error
}

// chromiumPath is the browser to drive, or "" when there is none.
func chromiumPath() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// newTab opens a tab of the shared browser, closed when the test ends.
func newTab(t *testing.T) context.Context {
	t.Helper()
	path := chromiumPath()
	if path == "" {
		t.Skip("no chromium: install it (apt-get install chromium; .ci/install.sh does) to run the browser tests")
	}
	b := &sharedBrowser
	b.once.Do(func() {
		b.dir, b.err = os.MkdirTemp("", "jobstore-chromium-")
		if b.err != nil {
			return
		}
		opts := []chromedp.ExecAllocatorOption{
			chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
			chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(b.dir),
			chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
			chromedp.Flag("disable-sync", true), chromedp.WindowSize(1200, 800),
		}
		alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
		ctx, cancelCtx := chromedp.NewContext(alloc)
		b.ctx = ctx
		b.cancel = func() { cancelCtx(); cancelAlloc() }
		b.err = chromedp.Do(ctx) // starts the browser
	})
	require.NoError(t, b.err, "starting %s", path)
	tab, cancel := chromedp.NewContext(b.ctx)
	t.Cleanup(cancel)
	// The tab lives as long as the context of its first run: tab itself,
	// not the bounded contexts of the steps.
	require.NoError(t, chromedp.Do(tab))
	return tab
}

// stopBrowser ends the shared browser, if one was started.
func stopBrowser() {
	b := &sharedBrowser
	if b.cancel != nil {
		b.cancel()
	}
	if b.dir != "" {
		os.RemoveAll(b.dir)
	}
}

// runIn runs browser actions within browserWait.
func runIn(t *testing.T, tab context.Context, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab, browserWait)
	defer cancel()
	require.NoError(t, chromedp.Do(ctx, actions...))
}

// click clicks the element that the CSS selector sel matches, within
// browserWait. A live page puts its rows back in place at each refresh (and
// a row's buttons anew at each update): a node found just before that is
// gone when the click comes to it, and the browser says it cannot find the
// node, before any mouse event is sent. The element is then looked up and
// clicked again.
func click(t *testing.T, tab context.Context, sel string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab, browserWait)
	defer cancel()
	for {
		err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(sel)))
		if err == nil || !strings.Contains(err.Error(), "Could not find node with given id") || ctx.Err() != nil {
			require.NoError(t, err, "clicking %s", sel)
			return
		}
	}
}

// eval evaluates a JavaScript expression in tab.
func eval[T any](t *testing.T, tab context.Context, expr string) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab, browserWait)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	require.NoError(t, err, "evaluating %s", expr)
	return v
}

// artifactsDir is where screenshots go: $JOBSTORE_ARTIFACTS (CI keeps
// it), or a directory of the test's.
func artifactsDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("JOBSTORE_ARTIFACTS")
	if dir == "" {
		return t.TempDir()
	}
	require.NoError(t, os.MkdirAll(dir, 0o755))
	return dir
}

// screenshot saves the whole page as name (PNG) in the artifacts dir.
func screenshot(t *testing.T, tab context.Context, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab, browserWait)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(artifactsDir(t), name), png, 0o644))
}

// waitDOM waits until the JavaScript expression is true, at most bound.
func waitDOM(t *testing.T, tab context.Context, bound time.Duration, expr, what string) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for {
		ctx, cancel := context.WithTimeout(tab, browserWait)
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool]("!!("+expr+")"))
		cancel()
		if err == nil && ok { // an error: the page is being replaced; look again
			return
		}
		if time.Now().After(deadline) {
			ctx, cancel := context.WithTimeout(tab, browserWait)
			page, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href + "\n" + document.body.innerText.slice(0, 600)`))
			cancel()
			require.FailNow(t, "not within "+bound.String()+": "+what, "the page:\n%s", page)
		}
		time.Sleep(servePollStep)
	}
}

// openPage opens the server's root page with the token (which becomes a
// cookie) in tab, and waits for its event stream.
func openPage(t *testing.T, tab context.Context, ts *testServer, path string) {
	t.Helper()
	runIn(t, tab, chromedp.Navigate(ts.base+path+"?token="+testToken))
	waitDOM(t, tab, browserWait, `document.getElementById("live").dataset.state === "live"`, "the page's event stream is open")
}

// dialogs counts the JavaScript dialogs the tab opens (and dismisses
// them).
func dialogs(tab context.Context) *atomic.Int32 {
	var n atomic.Int32
	seen := chromedp.Events(tab, page.JavascriptDialogOpening)
	go func() {
		for _, err := range seen {
			if err != nil {
				return
			}
			n.Add(1)
			chromedp.Call(tab, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}
	}()
	return &n
}

func TestServeBrowser_ListsJobsAndShowsAHostileKindAsText(t *testing.T) {
	tab := newTab(t)
	root := testdir.New(t)
	const evil = `<img src=x onerror=alert(1)>`
	clitest.Submit(t, root, "a-render")
	_, err := jobstore.Submit(root, jobstore.JobSpec{ID: "b-evil", Kind: evil, Labels: map[string]string{"x": evil}})
	require.NoError(t, err)
	clitest.RunJob(t, root, "c-done", jobstore.Outcome{State: jobstore.Succeeded, Message: "all <b>done</b>"})
	ts := startServer(t, root, false)
	seen := dialogs(tab)

	openPage(t, tab, ts, "/")
	ids := eval[[]string](t, tab, `[...document.querySelectorAll("#rows tr")].map(r => r.dataset.id)`)
	require.ElementsMatch(t, []string{"a-render", "b-evil", "c-done"}, ids)
	kind := eval[string](t, tab, `document.querySelector('tr[data-id="b-evil"] td.kind').textContent`)
	imgs := eval[int](t, tab, `document.querySelectorAll("img, #rows b").length`)
	require.Equal(t, evil, kind, "the kind is shown as text")
	require.Zero(t, imgs, "no markup from a record reached the page")

	openPage(t, tab, ts, "/jobs/b-evil")
	shown := eval[bool](t, tab, `document.body.innerText.includes(`+jsString(evil)+`)`)
	require.True(t, shown, "the job's page shows the kind as text")
	require.Zero(t, seen.Load(), "a dialog was opened")
}

// jsString is s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestServeBrowser_ProgressWriteUpdatesTheBarWithoutReload(t *testing.T) {
	tab := newTab(t)
	root := testdir.New(t)
	for _, id := range []string{"a-first", "b-second"} {
		clitest.Submit(t, root, id)
	}
	clitest.RunJob(t, root, "c-failed", jobstore.Outcome{State: jobstore.Failed, Message: "stopped", Error: "frame 15: disk full"})
	run, err := jobstore.Start(jobstore.JobDir(filepath.Join(root, "a-first")), jobstore.WithProgressInterval(0))
	require.NoError(t, err)
	defer run.Close()
	require.NoError(t, run.Progress(0.1, "starting"))
	ts := startServer(t, root, false)

	openPage(t, tab, ts, "/")
	eval[bool](t, tab, `window.sameDocument = true`)
	require.NoError(t, run.Progress(0.42, "frame 42 of 100"))
	waitDOM(t, tab, liveUpdateBound,
		`document.querySelector('tr[data-id="a-first"] progress').value === 0.42 && `+
			`document.querySelector('tr[data-id="a-first"] .msg').textContent === "frame 42 of 100"`,
		"the progress write shows on the page")
	require.True(t, eval[bool](t, tab, `window.sameDocument === true`), "the page was reloaded")
	screenshot(t, tab, "root.png")
	runIn(t, tab, chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
	screenshot(t, tab, "root-phone.png")
	runIn(t, tab, chromedp.EmulateViewport(1200, 800))
	_, err = chromedp.Call(tab, emulation.SetEmulatedMedia,
		emulation.SetEmulatedMediaParams{Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}})
	require.NoError(t, err)
	screenshot(t, tab, "root-dark.png")
}

func TestServeBrowser_CancelButtonEndsARunningJob(t *testing.T) {
	tab := newTab(t)
	root := testdir.New(t)
	dir := clitest.Submit(t, root, "a-long")
	run, err := jobstore.Start(dir, jobstore.WithProgressInterval(0))
	require.NoError(t, err)
	defer run.Close()
	require.NoError(t, run.Progress(0.3, "rendering"))
	require.NoError(t, os.WriteFile(filepath.Join(string(dir), jobview.StdoutFile), []byte("frame 1\nframe 2\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(string(dir), jobview.StderrFile), []byte("warning: low disk\n"), 0o644))
	ts := startServer(t, root, false)

	openPage(t, tab, ts, "/jobs/a-long")
	waitDOM(t, tab, browserWait, `document.getElementById("log-stdout").textContent.includes("frame 2")`, "the output is shown")
	f, err := os.OpenFile(filepath.Join(string(dir), jobview.StdoutFile), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString("frame 3\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	waitDOM(t, tab, browserWait, `document.getElementById("log-stdout").textContent.includes("frame 3")`, "the output is followed")
	screenshot(t, tab, "job.png")

	click(t, tab, `#cancel`)
	select {
	case <-run.Context().Done():
	case <-time.After(browserWait):
		require.FailNow(t, "the runner was not told to stop")
	}
	require.NoError(t, run.Finish(jobstore.Outcome{State: jobstore.Cancelled, Message: "stopped on request"}))
	waitDOM(t, tab, browserWait, `document.getElementById("state") && document.getElementById("state").textContent === "cancelled"`,
		"the page shows the job cancelled")
	st, err := jobstore.ReadStatus(dir)
	require.NoError(t, err)
	require.Equal(t, jobstore.Cancelled, st.State)
	c, err := jobstore.ReadCancel(dir)
	require.NoError(t, err)
	require.NotNil(t, c, "the button wrote the cancel request")
}
