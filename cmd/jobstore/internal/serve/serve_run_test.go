package serve

import (
	"context"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/axqua/jobstore/cmd/jobstore/internal/clitest"
	"github.com/axqua/jobstore/internal/testdir"
	"github.com/stretchr/testify/require"
)

var serveURLRE = regexp.MustCompile(`^(http://\S+)/\?token=(\S+)\n`)

// Run is the command without argv: given its options and a context,
// it serves until the context ends, and says so.
func TestRun_ServesUntilItsContextEnds(t *testing.T) {
	root := testdir.New(t)
	clitest.Submit(t, root, "a-queued")
	var stdout, stderr clitest.SyncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Options{Root: root, Addr: "127.0.0.1:0", ReadOnly: true, Stdout: &stdout, Stderr: &stderr})
	}()
	var m []string
	clitest.WaitUntil(t, "the address line", func() bool {
		m = serveURLRE.FindStringSubmatch(stdout.String())
		return m != nil
	})
	req, err := http.NewRequest(http.MethodGet, m[1]+"/api/jobs", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+m[2])
	code, body := do(t, req)
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, `"a-queued"`)

	cancel()
	select {
	case err := <-done:
		require.NoError(t, err, "a context ended by its owner is no error")
	case <-time.After(serveWait):
		require.FailNow(t, "Run did not return after its context ended")
	}
	require.Contains(t, stdout.String(), "serving "+root+" (read-only); Ctrl-C stops\nstopped serving "+root+"\n")
	require.Empty(t, stderr.String())
}
