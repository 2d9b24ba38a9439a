package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/axqua/jobstore/cmd/jobstore/internal/clitest"
	"github.com/axqua/jobstore/cmd/jobstore/internal/jobview"
	"github.com/axqua/jobstore/cmd/jobstore/internal/serve"
	"github.com/stretchr/testify/require"
)

// serveAPI serves root with serve.Run until the test ends; get requests a
// path of it with the token.
func serveAPI(t *testing.T, root string) (get func(t *testing.T, path string) (int, string)) {
	t.Helper()
	var stdout, stderr clitest.SyncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- serve.Run(ctx, serve.Options{Root: root, Addr: "127.0.0.1:0", ReadOnly: true, Stdout: &stdout, Stderr: &stderr})
	}()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	var m []string
	clitest.WaitUntil(t, "the address line", func() bool {
		m = regexp.MustCompile(`^(http://\S+)/\?token=(\S+)\n`).FindStringSubmatch(stdout.String())
		return m != nil
	})
	return func(t *testing.T, path string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, m[1]+path, nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+m[2])
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		body, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		return res.StatusCode, string(body)
	}
}

// The API answers as list --json and show --json print.
func TestServe_APIShapesAreListAndShowJSON(t *testing.T) {
	root := fixtureRoot(t)
	get := serveAPI(t, root)

	r := runCLI(t, "list", root, "--json")
	requireCode(t, r, exitOK)
	code, body := get(t, "/api/jobs")
	require.Equal(t, http.StatusOK, code)
	require.JSONEq(t, r.stdout, body)

	for _, id := range []string{"a-queued", "c-failed", "d-corrupt"} {
		r := runCLI(t, "show", filepath.Join(root, id), "--json")
		code, body := get(t, "/api/jobs/"+id)
		require.Equal(t, http.StatusOK, code)
		require.JSONEq(t, r.stdout, body, id)
	}

	// The list filters, as list's flags.
	r = runCLI(t, "list", root, "--json", "--state", "failed,succeeded", "--newest")
	requireCode(t, r, exitOK)
	code, body = get(t, "/api/jobs?state=failed,succeeded&order=newest")
	require.Equal(t, http.StatusOK, code)
	require.JSONEq(t, r.stdout, body)
	var got jobview.ListJSON
	require.NoError(t, json.Unmarshal([]byte(body), &got))
	require.Len(t, got.Jobs, 2)
	require.Equal(t, "c-failed", got.Jobs[0].ID)
	code, body = get(t, "/api/jobs?label=team=vfx&limit=1")
	require.Equal(t, http.StatusOK, code)
	require.NoError(t, json.Unmarshal([]byte(body), &got))
	require.Len(t, got.Jobs, 1)
	require.Equal(t, "a-queued", got.Jobs[0].ID)
}
