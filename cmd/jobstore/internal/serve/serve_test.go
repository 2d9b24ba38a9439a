package serve

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/clitest"
	"github.com/axqua/jobstore/cmd/jobstore/internal/jobview"
	"github.com/axqua/jobstore/internal/testdir"
	"github.com/stretchr/testify/require"
)

func TestServe_EveryRequestNeedsTheToken(t *testing.T) {
	root := testdir.New(t)
	clitest.Submit(t, root, "secret-job")
	ts := startServer(t, root, false)
	for _, path := range []string{"/", "/jobs/secret-job", "/jobs/secret-job/log?name=stdout", "/api/jobs", "/api/jobs/secret-job",
		"/api/rows", "/metrics", "/events", "/static/app.css", "/nowhere"} {
		t.Run(path, func(t *testing.T) {
			for name, set := range map[string]func(*http.Request){
				"none":         func(*http.Request) {},
				"wrong bearer": func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+strings.Repeat("0", len(testToken))) },
				"wrong cookie": func(r *http.Request) { r.AddCookie(&http.Cookie{Name: ts.cookie, Value: "nope"}) },
				"wrong query":  func(r *http.Request) { r.URL.RawQuery = "token=nope" },
			} {
				req, err := http.NewRequest(http.MethodGet, ts.base+path, nil)
				require.NoError(t, err)
				set(req)
				code, body := do(t, req)
				require.Equal(t, http.StatusUnauthorized, code, name)
				require.NotContains(t, body, "secret-job", name)
			}
		})
	}

	// The first visit with ?token= turns it into a cookie and leaves the address.
	req, _ := http.NewRequest(http.MethodGet, ts.base+"/?token="+testToken, nil)
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Equal(t, "/", res.Header.Get("Location"))
	cookies := res.Cookies()
	require.Len(t, cookies, 1)
	require.True(t, cookies[0].HttpOnly)
	req, _ = http.NewRequest(http.MethodGet, ts.base+"/", nil)
	req.AddCookie(cookies[0])
	code, body := do(t, req)
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, "secret-job")
	// A script may pass ?token= on every request.
	req, _ = http.NewRequest(http.MethodGet, ts.base+"/api/jobs?token="+testToken, nil)
	code, body = do(t, req)
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, "secret-job")
}

func TestServe_PagesCarryAPolicyWithoutInlineScript(t *testing.T) {
	root := testdir.New(t)
	clitest.Submit(t, root, "a")
	ts := startServer(t, root, false)
	for _, path := range []string{"/", "/jobs/a"} {
		req, _ := http.NewRequest(http.MethodGet, ts.base+path, nil)
		req.Header.Set("Authorization", "Bearer "+testToken)
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		var b bytes.Buffer
		b.ReadFrom(res.Body)
		res.Body.Close()
		csp := res.Header.Get("Content-Security-Policy")
		require.Contains(t, csp, "script-src 'self'")
		require.NotContains(t, csp, "unsafe-inline")
		require.NotRegexp(t, `<script>|<script [^>]*>[^<]`, b.String(), "an inline script in %s", path)
		require.NotContains(t, b.String(), "style=", "an inline style in %s", path)
	}
}

func TestServe_ActionsNeedTheirPagesCSRFToken(t *testing.T) {
	root := testdir.New(t)
	dir := clitest.Submit(t, root, "a-queued")
	clitest.Submit(t, root, "b-other")
	ts := startServer(t, root, false)
	good := ts.csrfOf(t, "a-queued")
	other := ts.csrfOf(t, "b-other")
	forged := good[:len(good)-1] + string("0123456789abcdef"[(strings.IndexByte("0123456789abcdef", good[len(good)-1])+1)%16])
	for name, c := range map[string]struct {
		form   url.Values
		header http.Header
	}{
		"no csrf":             {url.Values{}, nil},
		"another job's csrf":  {url.Values{"csrf": {other}}, nil},
		"forged csrf":         {url.Values{"csrf": {forged}}, nil},
		"from another site":   {url.Values{"csrf": {good}}, http.Header{"Origin": {"http://evil.example"}}},
		"cross-site fetch":    {url.Values{"csrf": {good}}, http.Header{"Sec-Fetch-Site": {"cross-site"}}},
		"csrf in the address": {nil, nil},
	} {
		t.Run(name, func(t *testing.T) {
			path := "/jobs/a-queued/cancel"
			if c.form == nil {
				path += "?csrf=" + url.QueryEscape(good)
			}
			code, _ := ts.post(t, path, c.form, c.header)
			require.Equal(t, http.StatusForbidden, code)
			require.NoFileExists(t, dir.CancelPath(), "refused, yet written")
		})
	}
	code, _ := ts.post(t, "/jobs/a-queued/cancel", url.Values{"csrf": {good}}, nil)
	require.Equal(t, http.StatusSeeOther, code)
	require.FileExists(t, dir.CancelPath())
	st, err := jobstore.ReadStatus(dir)
	require.NoError(t, err)
	require.Equal(t, jobstore.Cancelled, st.State)

	// Retry: a failed, lost or cancelled job only; the page then lists its attempts.
	failed := clitest.RunJob(t, root, "c-failed", jobstore.Outcome{State: jobstore.Failed, Error: "boom"})
	clitest.WaitUntil(t, "the server sees c-failed", func() bool { return ts.table.job(failed) != nil })
	csrf := ts.csrfOf(t, "c-failed")
	code, body := ts.post(t, "/jobs/c-failed/retry", url.Values{"csrf": {csrf}}, nil)
	require.Equal(t, http.StatusSeeOther, code, body)
	st, err = jobstore.ReadStatus(failed)
	require.NoError(t, err)
	require.Equal(t, jobstore.Queued, st.State)
	require.Len(t, st.Attempts, 1)
	code, body = ts.get(t, "/jobs/c-failed")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, "attempt 1")
	require.Contains(t, body, "boom")
	require.NotContains(t, body, `action="/jobs/c-failed/retry"`, "a queued job offers a retry")
	code, body = ts.post(t, "/jobs/c-failed/retry", url.Values{"csrf": {csrf}}, nil)
	require.Equal(t, http.StatusConflict, code, body)

	// Remove: a finished job only.
	code, body = ts.post(t, "/jobs/b-other/remove", url.Values{"csrf": {other}}, nil)
	require.Equal(t, http.StatusConflict, code, body)
	require.DirExists(t, filepath.Join(root, "b-other"))
	code, _ = ts.post(t, "/jobs/a-queued/remove", url.Values{"csrf": {good}}, nil)
	require.Equal(t, http.StatusSeeOther, code)
	require.NoDirExists(t, string(dir))
}

func TestServe_ReadOnlyShowsNoActionAndRefusesThem(t *testing.T) {
	root := testdir.New(t)
	dir := clitest.Submit(t, root, "a-queued")
	done := clitest.RunJob(t, root, "b-done", jobstore.Outcome{State: jobstore.Succeeded})
	ts := startServer(t, root, true)
	for _, id := range []string{"a-queued", "b-done"} {
		code, body := ts.get(t, "/jobs/"+id)
		require.Equal(t, http.StatusOK, code)
		require.NotContains(t, body, "<form")
		require.NotContains(t, body, "<button")
		require.NotContains(t, body, `name="csrf"`)
	}
	// Even with a token the server made (it signs with the same key).
	csrf := ts.csrfToken("a-queued")
	for _, action := range []string{"cancel", "remove", "retry"} {
		code, _ := ts.post(t, "/jobs/a-queued/"+action, url.Values{"csrf": {csrf}}, nil)
		require.Equal(t, http.StatusForbidden, code, action)
		code, _ = ts.post(t, "/jobs/b-done/"+action, url.Values{"csrf": {ts.csrfToken("b-done")}}, nil)
		require.Equal(t, http.StatusForbidden, code, action)
	}
	require.NoFileExists(t, dir.CancelPath())
	require.DirExists(t, string(done))
}

func TestServe_NamesOutsideTheRootAreNotFound(t *testing.T) {
	root := testdir.New(t)
	clitest.Submit(t, root, "a")
	outside := testdir.New(t)
	const secret = "outside-secret-7f3a"
	// A job directory outside the root, and a link to it inside.
	odir, err := jobstore.Submit(outside, jobstore.JobSpec{ID: "elsewhere", Kind: secret})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(string(odir), jobview.StdoutFile), []byte(secret), 0o644))
	requireSymlink(t, string(odir), filepath.Join(root, "linked"))
	// A log that is a link to a file outside.
	secretFile := filepath.Join(outside, "secret.txt")
	require.NoError(t, os.WriteFile(secretFile, []byte(secret), 0o644))
	requireSymlink(t, secretFile, filepath.Join(root, "a", jobview.StdoutFile))
	ts := startServer(t, root, false)

	for _, name := range []string{"..", "%2e%2e", "..%2f..%2fetc%2fpasswd", "a%2f..%2f..", "linked", "nope", ".hidden",
		"a%2fstdout.log", "%2fetc"} {
		for _, path := range []string{"/jobs/" + name, "/api/jobs/" + name, "/jobs/" + name + "/log?name=stdout"} {
			code, body := ts.get(t, path)
			if code/100 != 3 { // a path with ".." is redirected to its clean form, outside /jobs
				require.Equal(t, http.StatusNotFound, code, path)
			}
			require.NotContains(t, body, secret, path)
		}
	}
	code, body := ts.get(t, "/jobs/../../etc/passwd")
	require.NotEqual(t, http.StatusOK, code)
	require.NotContains(t, body, "root:")

	// The link's own row says what it is; its target is never read.
	code, body = ts.get(t, "/api/jobs")
	require.Equal(t, http.StatusOK, code)
	require.NotContains(t, body, secret)
	require.Contains(t, body, "not_regular")
	// The linked log is an error, not the file it names.
	code, body = ts.get(t, "/jobs/a/log?name=stdout")
	require.Equal(t, http.StatusOK, code)
	require.NotContains(t, body, secret)
	require.Contains(t, body, "not a regular file")
	code, body = ts.get(t, "/jobs/a")
	require.Equal(t, http.StatusOK, code)
	require.NotContains(t, body, secret)
}

func TestServe_HostileFilesAreShownAsErrorsOrCutNeverHang(t *testing.T) {
	root := testdir.New(t)
	// A status.json that is a FIFO: reading it would block forever.
	fifoJob := clitest.Submit(t, root, "a-fifo-status")
	require.NoError(t, os.Remove(fifoJob.StatusPath()))
	if err := clitest.Mkfifo(fifoJob.StatusPath()); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	// Logs that are a FIFO.
	fifoLog := clitest.Submit(t, root, "b-fifo-log")
	require.NoError(t, clitest.Mkfifo(filepath.Join(string(fifoLog), jobview.StdoutFile)))
	// Params of nearly 16 MiB (the most a record may hold).
	big := bytes.Repeat([]byte("x"), jobstore.DefaultMaxSize-(64<<10))
	params, err := json.Marshal(map[string]string{"blob": string(big)})
	require.NoError(t, err)
	_, err = jobstore.Submit(root, jobstore.JobSpec{ID: "c-big-params", Kind: "render", Params: params})
	require.NoError(t, err)
	// An output of 1 GiB (sparse), with a last line to find.
	bigLog := clitest.Submit(t, root, "d-big-log")
	f, err := os.Create(filepath.Join(string(bigLog), jobview.StdoutFile))
	require.NoError(t, err)
	const last = "the very last line\n"
	require.NoError(t, f.Truncate(1<<30))
	_, err = f.WriteAt([]byte(last), 1<<30-int64(len(last)))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	ts := startServer(t, root, false)

	code, body := ts.get(t, "/jobs/a-fifo-status")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, "not a regular file")
	code, body = ts.get(t, "/api/jobs")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, `"kind": "not_regular"`)

	code, body = ts.get(t, "/jobs/b-fifo-log")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, "not a regular file")
	code, body = ts.get(t, "/jobs/b-fifo-log/log?name=stdout&from=0")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, "not a regular file")

	code, body = ts.get(t, "/jobs/c-big-params")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, "the first 64.0 KiB are shown as written")
	require.Less(t, len(body), 1<<20, "the page carries the params whole")
	code, body = ts.get(t, "/")
	require.Equal(t, http.StatusOK, code)
	require.Less(t, len(body), 1<<20)

	code, body = ts.get(t, "/jobs/d-big-log")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, "stdout.log is 1.0 GiB: its first")
	require.Contains(t, body, strings.TrimSpace(last))
	require.Less(t, len(body), 1<<20, "the page carries the log whole")
	code, body = ts.get(t, "/jobs/d-big-log/log?name=stdout&from=0")
	require.Equal(t, http.StatusOK, code)
	var chunk logChunkJSON
	require.NoError(t, json.Unmarshal([]byte(body), &chunk))
	require.True(t, chunk.Gap, "a cut without saying so")
	require.Equal(t, int64(1<<30), chunk.Size)
	require.Equal(t, int64(1<<30), chunk.Next)
	require.LessOrEqual(t, chunk.Next-chunk.Start, int64(logChunk), "more than a chunk read")
	require.True(t, strings.HasSuffix(chunk.Text, last))
}

func TestFormatParams_IndentsCutsAndSaysSo(t *testing.T) {
	blob := func(n int) []byte {
		b, err := json.Marshal(map[string]string{"blob": strings.Repeat("x", n)})
		require.NoError(t, err)
		return b
	}
	for _, c := range []struct {
		name    string
		params  []byte
		note    string
		indents bool
	}{
		{"small: indented whole", []byte(`{"a":1,"b":[2,3]}`), "", true},
		{"200 KiB: indented, cut", blob(200 << 10), "formatted): the first 64.0 KiB are shown", true},
		{"2 MiB: cut as written", blob(2 << 20), "the first 64.0 KiB are shown as written", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			text, note := formatParams(c.params)
			require.LessOrEqual(t, len(text), maxParamsShown+len("…"))
			require.Equal(t, c.indents, strings.HasPrefix(text, "{\n  "), text[:min(len(text), 20)])
			if c.note == "" {
				require.Empty(t, note)
			} else {
				require.Contains(t, note, c.note)
			}
		})
	}
}
