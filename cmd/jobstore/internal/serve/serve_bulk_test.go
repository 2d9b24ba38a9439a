package serve

import (
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/clitest"
	"github.com/axqua/jobstore/internal/testdir"
	"github.com/stretchr/testify/require"
)

// listCSRFOf is the CSRF token of the root's page.
func (ts *testServer) listCSRFOf(t *testing.T) string {
	t.Helper()
	code, body := ts.get(t, "/")
	require.Equal(t, http.StatusOK, code, body)
	m := csrfRE.FindStringSubmatch(body)
	require.NotNil(t, m, "no CSRF token in the root's page")
	return m[1]
}

// postTo posts form to path with the token and returns the status and
// where it redirects.
func (ts *testServer) postTo(t *testing.T, path string, form url.Values) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, ts.base+path, strings.NewReader(form.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", "Bearer "+testToken)
	c := &http.Client{Timeout: serveWait, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	return res.StatusCode, res.Header.Get("Location")
}

// stateOf is the state in dir's status.
func stateOf(t *testing.T, dir jobstore.JobDir) jobstore.State {
	t.Helper()
	st, err := jobstore.ReadStatus(dir)
	require.NoError(t, err)
	return st.State
}

func TestServe_RowActionsComeBackToTheList(t *testing.T) {
	root := testdir.New(t)
	failed := clitest.RunJob(t, root, "a-failed", jobstore.Outcome{State: jobstore.Failed, Error: "boom"})
	queued := clitest.Submit(t, root, "b-queued")
	ts := startServer(t, root, false)
	csrf := ts.listCSRFOf(t)

	_, page := ts.get(t, "/?state=failed")
	require.Contains(t, page, `formaction="/jobs/a-failed/retry"`, "a failed row offers retry")
	_, page = ts.get(t, "/?state=queued")
	require.Contains(t, page, `formaction="/jobs/b-queued/cancel"`, "a queued row offers cancel")
	require.NotContains(t, page, `formaction="/jobs/b-queued/retry"`)

	for _, c := range []struct {
		name, id, action, back, location string
	}{
		{"retry from a filtered list", "a-failed", "retry", "/?state=failed&done=cancel", "/?done=retry&id=a-failed&state=failed"},
		{"cancel, back to another site: the job's page", "b-queued", "cancel", "https://evil.example/?state=x", "/jobs/b-queued?done=cancel"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, loc := ts.postTo(t, "/jobs/"+c.id+"/"+c.action, url.Values{"csrf": {csrf}, "back": {c.back}})
			require.Equal(t, http.StatusSeeOther, code)
			require.Equal(t, c.location, loc)
		})
	}
	// From the job's page: back to it, which keeps its way to the list.
	for _, c := range []struct{ name, id, list, location string }{
		{"a filtered list", "p-1", "/?state=queued", "/jobs/p-1?back=%2F%3Fstate%3Dqueued&done=cancel"},
		{"the whole list", "p-2", "/", "/jobs/p-2?done=cancel"},
		{"another site", "p-3", "//evil.example/", "/jobs/p-3?done=cancel"},
	} {
		t.Run("from the job's page, "+c.name, func(t *testing.T) {
			dir := clitest.Submit(t, root, c.id)
			clitest.WaitUntil(t, "the server sees "+c.id, func() bool { return ts.table.job(dir) != nil })
			code, loc := ts.postTo(t, "/jobs/"+c.id+"/cancel", url.Values{"csrf": {ts.csrfOf(t, c.id)}, "list": {c.list}})
			require.Equal(t, http.StatusSeeOther, code)
			require.Equal(t, c.location, loc)
		})
	}
	// A removal from the job's page goes back to the list it came from.
	gone := clitest.RunJob(t, root, "q-done", jobstore.Outcome{State: jobstore.Succeeded})
	code, loc := ts.postTo(t, "/jobs/q-done/remove", url.Values{"csrf": {ts.csrfOf(t, "q-done")}, "list": {"/?kind=render"}})
	require.Equal(t, http.StatusSeeOther, code)
	require.Equal(t, "/?done=removed&id=q-done&kind=render", loc)
	require.NoDirExists(t, string(gone))
	require.Equal(t, jobstore.Queued, stateOf(t, failed), "retried")
	require.FileExists(t, queued.CancelPath(), "cancel requested")
	_, page = ts.get(t, "/?done=retry&id=a-failed")
	require.Contains(t, page, "queued job a-failed again")
}

func TestServe_BulkRemoveAsksThenSaysWhatItDid(t *testing.T) {
	root := testdir.New(t)
	a := clitest.RunJob(t, root, "a-done", jobstore.Outcome{State: jobstore.Succeeded})
	b := clitest.RunJob(t, root, "b-failed", jobstore.Outcome{State: jobstore.Failed})
	c := clitest.Submit(t, root, "c-queued")
	ts := startServer(t, root, false)
	csrf := ts.listCSRFOf(t)
	form := url.Values{"csrf": {csrf}, "back": {"/?kind=render"}, "id": {"a-done", "b-failed", "c-queued", "../x"}}

	code, body := ts.post(t, "/bulk/remove", form, nil)
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, body, "remove 4 jobs?")
	require.Contains(t, body, `name="confirm" value="yes"`)
	for _, d := range []jobstore.JobDir{a, b, c} {
		require.DirExists(t, string(d), "nothing removed before the confirmation")
	}

	form.Set("confirm", "yes")
	code, body = ts.post(t, "/bulk/remove", form, nil)
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, body, "remove: 2 done, 2 not")
	require.Contains(t, body, "<dt>c-queued</dt>", "the queued job is named as not removed")
	require.Contains(t, body, "<dt>../x</dt><dd>no such job under this root</dd>")
	require.Contains(t, body, `href="/?kind=render"`, "the way back to the list")
	require.NoDirExists(t, string(a))
	require.NoDirExists(t, string(b))
	require.DirExists(t, string(c))
	require.DirExists(t, filepath.Join(root, "c-queued"))
}

func TestServe_BulkRetryRetriesTheFailedJobsTheFiltersChoose(t *testing.T) {
	root := testdir.New(t)
	var render []jobstore.JobDir
	for _, id := range []string{"a-1", "a-2"} {
		render = append(render, clitest.RunJob(t, root, id, jobstore.Outcome{State: jobstore.Failed}))
	}
	other, err := jobstore.Submit(root, jobstore.JobSpec{ID: "b-other", Kind: "encode"})
	require.NoError(t, err)
	run, err := jobstore.Start(other)
	require.NoError(t, err)
	require.NoError(t, run.Finish(jobstore.Outcome{State: jobstore.Failed}))
	run.Close()
	ok := clitest.RunJob(t, root, "c-ok", jobstore.Outcome{State: jobstore.Succeeded})
	ts := startServer(t, root, false)
	csrf := ts.listCSRFOf(t)

	_, page := ts.get(t, "/?kind=render")
	require.Contains(t, page, "retry 2 failed")
	code, body := ts.post(t, "/bulk/retry", url.Values{"csrf": {csrf}, "kind": {"render"}}, nil)
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, body, "retry 2 jobs?")
	require.NotContains(t, body, "b-other", "another kind is not chosen")
	ids := regexpAll(body, `<input type="hidden" name="id" value="([^"]+)">`)
	require.ElementsMatch(t, []string{"a-1", "a-2"}, ids)

	code, body = ts.post(t, "/bulk/retry", url.Values{"csrf": {csrf}, "confirm": {"yes"}, "id": ids}, nil)
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, body, "retry: 2 done, 0 not")
	for _, d := range render {
		require.Equal(t, jobstore.Queued, stateOf(t, d), d.ID())
	}
	require.Equal(t, jobstore.Failed, stateOf(t, other))
	require.Equal(t, jobstore.Succeeded, stateOf(t, ok))
}

func TestServe_BulkActionsNeedTheListsCSRFToken(t *testing.T) {
	root := testdir.New(t)
	dir := clitest.RunJob(t, root, "a-done", jobstore.Outcome{State: jobstore.Succeeded})
	ts := startServer(t, root, false)
	ro := startServer(t, root, true)
	for _, c := range []struct {
		name string
		ts   *testServer
		csrf string
	}{
		{"no token", ts, ""},
		{"a job's token", ts, ts.csrfToken("a-done")},
		{"a token of another server", ts, ro.listCSRF()},
		{"read-only", ro, ro.listCSRF()},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _ := c.ts.post(t, "/bulk/remove", url.Values{"csrf": {c.csrf}, "confirm": {"yes"}, "id": {"a-done"}}, nil)
			require.Equal(t, http.StatusForbidden, code)
		})
	}
	code, _ := ts.post(t, "/bulk/remove", url.Values{"csrf": {ts.listCSRF()}, "confirm": {"yes"}, "id": {"a-done"}},
		http.Header{"Origin": {"https://evil.example"}})
	require.Equal(t, http.StatusForbidden, code, "from another site")
	require.DirExists(t, string(dir))
	_, page := ro.get(t, "/")
	require.NotContains(t, page, "<form id=\"bulk\"")
	require.NotContains(t, page, "data-action=")
	require.NotContains(t, page, "remove selected")
}

// regexpAll is the first group of every match of re in s.
func regexpAll(s, re string) []string {
	var out []string
	for _, m := range regexp.MustCompile(re).FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}
