package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/require"
)

// This file is the kit of serve's tests: a server on a root, requests
// with and without the token, an event stream reader, bulk job fixtures.

// testToken is the token of the test servers.
const testToken = "0123456789abcdef0123456789abcdef"

// Timing of serve's tests: how long a test waits for something the
// server is expected to do (a bound that only a broken server reaches).
const (
	serveWait     = 10 * time.Second
	servePollStep = 10 * time.Millisecond
)

// testServer is a server on a root, behind an httptest server.
type testServer struct {
	*server
	http *httptest.Server
	base string
}

// startServer serves root until the test ends.
func startServer(t testing.TB, root string, readOnly bool) *testServer {
	t.Helper()
	s, err := newServer(context.Background(), serverConfig{root: root, token: testToken, readOnly: readOnly})
	require.NoError(t, err)
	ts := httptest.NewUnstartedServer(s.handler())
	ts.Config.ReadHeaderTimeout = HeaderTimeout
	ts.Start()
	t.Cleanup(ts.Close)
	t.Cleanup(s.close) // before ts.Close: event streams end first
	ctx, cancel := context.WithTimeout(context.Background(), serveWait)
	defer cancel()
	require.NoError(t, s.waitSynced(ctx))
	return &testServer{server: s, http: ts, base: ts.URL}
}

// get requests path with the token as a bearer token.
func (ts *testServer) get(t testing.TB, path string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, ts.base+path, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+testToken)
	return do(t, req)
}

// post posts form to path with the token.
func (ts *testServer) post(t testing.TB, path string, form url.Values, header http.Header) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, ts.base+path, strings.NewReader(form.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", "Bearer "+testToken)
	for k, v := range header {
		req.Header[k] = v
	}
	return do(t, req)
}

// do sends req without following redirects and returns the status and
// body.
func do(t testing.TB, req *http.Request) (int, string) {
	t.Helper()
	c := &http.Client{Timeout: serveWait, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, string(b)
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([0-9a-f]+\.[0-9a-f]+)"`)

// csrfOf is the CSRF token in a job's page.
func (ts *testServer) csrfOf(t testing.TB, id string) string {
	t.Helper()
	code, body := ts.get(t, "/jobs/"+id)
	require.Equal(t, http.StatusOK, code, body)
	m := csrfRE.FindStringSubmatch(body)
	require.NotNil(t, m, "no CSRF token in the page of %s", id)
	return m[1]
}

// eventStream is one client of /events.
type eventStream struct {
	events chan sseEvent
	cancel context.CancelFunc
}

type sseEvent struct {
	name string
	data string
}

// openEvents connects to /events (query: e.g. "?job=ID") and delivers
// its events on a channel until the test ends.
func (ts *testServer) openEvents(t testing.TB, query string) *eventStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ts.base+"/events"+query, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+testToken)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode)
	es := &eventStream{events: make(chan sseEvent, 1<<16), cancel: cancel}
	go func() {
		defer res.Body.Close()
		defer close(es.events)
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.name != "" {
					es.events <- ev
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, "event: "):
				ev.name = line[len("event: "):]
			case strings.HasPrefix(line, "data: "):
				ev.data = line[len("data: "):]
			}
		}
	}()
	t.Cleanup(cancel)
	return es
}

// waitEvent waits for an event for which match is true.
func (es *eventStream) waitEvent(t testing.TB, match func(sseEvent) bool) sseEvent {
	t.Helper()
	timeout := time.After(serveWait)
	for {
		select {
		case ev, ok := <-es.events:
			require.True(t, ok, "the event stream ended")
			if match(ev) {
				return ev
			}
		case <-timeout:
			require.FailNow(t, "no such event within the wait")
		}
	}
}

// jobRowOf decodes a "job" event's row.
func jobRowOf(ev sseEvent) (pageRow, bool) {
	if ev.name != "job" {
		return pageRow{}, false
	}
	var d struct {
		Row pageRow `json:"row"`
	}
	if json.Unmarshal([]byte(ev.data), &d) != nil {
		return pageRow{}, false
	}
	return d.Row, true
}

// bulkJobs writes n queued jobs under root with the library's writers,
// without fsync (fixtures for many jobs), and returns their directories.
func bulkJobs(t testing.TB, root, kind string, n int) []jobstore.JobDir {
	t.Helper()
	dirs := make([]jobstore.JobDir, n)
	for i := range dirs {
		id := fmt.Sprintf("%s-%05d", kind, i)
		dir := jobstore.JobDir(root + "/" + id)
		require.NoError(t, jobstore.WriteSpec(dir, jobstore.JobSpec{ID: id, Kind: kind}, jobstore.NoSync()))
		require.NoError(t, jobstore.WriteStatus(dir, jobstore.JobStatus{State: jobstore.Queued, Seq: 1}, jobstore.NoSync()))
		dirs[i] = dir
	}
	return dirs
}

// requireSymlink makes a symbolic link, or skips the test where this user
// cannot (Windows without the privilege).
func requireSymlink(t testing.TB, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("cannot make a symbolic link here: %v", err)
	}
}
