//go:build unix

package main

import (
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/axqua/jobstore/cmd/jobstore/internal/clitest"
	"github.com/axqua/jobstore/internal/testdir"
	"github.com/stretchr/testify/require"
)

func TestServeCommand_FirstLineIsTheAddressWithTheToken(t *testing.T) {
	root := testdir.New(t)
	clitest.Submit(t, root, "a-job")
	tokenFile := filepath.Join(testdir.New(t), "token")
	require.NoError(t, os.WriteFile(tokenFile, []byte(cliTestToken+"\n"), 0o600))
	w := startLines(t, "serve", root, "--addr", "127.0.0.1:0", "--token-file", tokenFile)
	first := w.waitLine(t, "http://")
	m := regexp.MustCompile(`^http://127\.0\.0\.1:(\d+)/\?token=(\w+)$`).FindStringSubmatch(first)
	require.NotNil(t, m, "the first line: %q", first)
	require.NotEqual(t, "0", m[1], "port 0 is not where it listens")
	require.Equal(t, cliTestToken, m[2])
	require.Equal(t, first, w.seen[0], "the address is not the first line")

	base := strings.TrimSuffix(first, "/?token="+cliTestToken)
	res, err := http.Get(base + "/api/jobs")
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusUnauthorized, res.StatusCode)
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	browser := &http.Client{Jar: jar}
	res, err = browser.Get(first)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode) // the redirect followed with the cookie
	require.Equal(t, "/", res.Request.URL.RequestURI(), "the token stays in the address")

	w.interrupt(t)
	_, last := w.wait(t)
	requireEndedBy(t, w.cmd, syscall.SIGINT)
	require.Equal(t, "stopped serving "+root, last)
}

// cliTestToken is the token the served command is given.
const cliTestToken = "0123456789abcdef0123456789abcdef"
