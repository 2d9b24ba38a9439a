package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/axqua/jobstore"
)

func serveCmd() *command {
	return &command{
		name:    "serve",
		args:    "ROOT [--addr HOST:PORT] [--read-only] [--token-file FILE]",
		summary: "serve a web page, a JSON API and metrics of the jobs under ROOT",
		doc: `Serves the jobs under ROOT over HTTP until stopped (Ctrl-C, SIGINT or
SIGTERM): a page of every job, kept current as runners write (server-sent
events fed by WatchRoot), a page per job with its spec, status, output and
actions, a JSON API and Prometheus metrics.

Examples:
  jobstore serve /srv/jobs
  jobstore serve /srv/jobs --addr 127.0.0.1:0 --read-only

The first line on stdout is the address to open, with the access token:

  http://127.0.0.1:7878/?token=3f9c...

Every request must carry the token: as ?token=, as "Authorization: Bearer
TOKEN", or as the cookie a page visited with ?token= sets. Without it the
answer is 401 and no data. The token is random for each run, or the first
line of --token-file (for a scraper's configuration).

--addr is where to listen (default 127.0.0.1:7878; port 0 picks a free
port, which the first line names). Listening on another address than the
loopback lets other machines in: the token then travels in clear text
(there is no TLS), as stderr warns.

Pages:
  /             one row a job (ID, kind, state, when a queued job is due,
                progress and message, attempt, host, age), counts by state,
                filters by state (and scheduled, retrying) and kind, a text
                search, 100 rows a page; each row's actions, and remove
                selected and retry all failed of the filters, confirmed first
  /kinds        each kind's jobs by state, and its ends and failures over
                the last hour, as bars
  /jobs/ID      the job's spec (params as formatted JSON, labels), status,
                attempts, cancel request and the end of its output
                (stdout.log and stderr.log, kept by 'jobstore work'),
                followed live; and the actions: cancel (a queued or running
                job), retry (a failed, lost or cancelled job) and remove (a
                finished job), each a POST with the page's CSRF token
API, for scripts:
  /api/jobs     as 'jobstore list --json', with ?state=, ?kind=, ?label=k=v,
                ?search=, ?limit=N and ?order=newest|oldest
  /api/jobs/ID  as 'jobstore show --json'
  /api/kinds    the summary by kind
  /metrics      Prometheus text format (docs/cli.md lists the metrics)

--read-only shows no action and refuses every POST (403).

Exit codes: 2 bad arguments; 3 ROOT cannot be read, or the address cannot
be listened on; stopped by SIGINT or SIGTERM: ends by that signal (a shell
reports 130 or 143).
Details: docs/cli.md#serve`,
		minPos: 1, maxPos: 1, posNames: "ROOT",
		define: defineServe,
	}
}

// defaultServeAddr is where serve listens without --addr.
const defaultServeAddr = "127.0.0.1:7878"

// Timeouts of the HTTP server: the headers of a request must arrive
// within serveHeaderTimeout and its body within serveReadTimeout; an
// answer (but an event stream, whose every write has its own deadline)
// must be written within serveWriteTimeout.
const (
	serveHeaderTimeout = 5 * time.Second
	serveReadTimeout   = 30 * time.Second
	serveWriteTimeout  = 30 * time.Second
	serveIdleTimeout   = 2 * time.Minute
	serveShutdownWait  = 5 * time.Second
)

// serveOptions are what "jobstore serve" is told: ROOT and its flags.
type serveOptions struct {
	Root      string
	Addr      string // HOST:PORT to listen on (port 0: a free one)
	ReadOnly  bool   // show no action, refuse every POST
	TokenFile string // the token is its first line; "": a random token
}

func defineServe(fs *pflag.FlagSet) runFunc {
	var opts serveOptions
	fs.StringVar(&opts.Addr, "addr", defaultServeAddr, "listen on HOST:PORT (port 0: a free port)")
	fs.BoolVar(&opts.ReadOnly, "read-only", false, "show no action and refuse every POST")
	fs.StringVar(&opts.TokenFile, "token-file", "", "read the access token from the first line of FILE instead of making one")
	return func(e *env, args, pos []string) error {
		opts.Root = pos[0]
		ctx, release := untilStopped(context.Background())
		defer release()
		return runServe(ctx, e, opts)
	}
}

// runServe serves opts.Root until ctx ends: it prints the address to open
// (with the token) as its first line on e.stdout, and "stopped serving
// ROOT" once the server is shut down. It returns ctx's stop signal
// (stopCause) when one ended it, nil when ctx ended otherwise, or why it
// could not serve (ROOT unreadable, the address in use, a bad token file).
func runServe(ctx context.Context, e *env, opts serveOptions) error {
	root := opts.Root
	if _, err := rootJobDirs("serve", root); err != nil {
		return err
	}
	token, err := serveToken(opts.TokenFile)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return withCLIRemedy(&jobstore.Error{Op: "listen", Path: opts.Addr, Msg: "cannot listen", Err: err},
			"give another --addr, or port 0 for a free one")
	}
	defer ln.Close()
	s, err := newServer(ctx, serverConfig{root: root, token: token, readOnly: opts.ReadOnly, port: portOf(ln.Addr())})
	if err != nil {
		return err
	}
	if err := s.waitSynced(ctx); err != nil {
		return stopOr(ctx, err)
	}
	host := ln.Addr().(*net.TCPAddr)
	fmt.Fprintf(e.stdout, "http://%s/?token=%s\n", host.String(), token)
	mode := ""
	if opts.ReadOnly {
		mode = " (read-only)"
	}
	fmt.Fprintf(e.stdout, "serving %s%s; Ctrl-C stops\n", root, mode)
	if !host.IP.IsLoopback() {
		fmt.Fprintf(e.stderr, "jobstore serve: listening on %s, beyond this machine: the token travels in clear text (no TLS)\n", host)
	}
	hs := &http.Server{Handler: s.handler(), ReadHeaderTimeout: serveHeaderTimeout, ReadTimeout: serveReadTimeout,
		IdleTimeout: serveIdleTimeout, MaxHeaderBytes: 64 << 10}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case err := <-served:
		s.close()
		return err
	case <-ctx.Done():
	}
	s.close()
	sctx, cancel := context.WithTimeout(context.Background(), serveShutdownWait)
	defer cancel()
	hs.Shutdown(sctx)
	fmt.Fprintf(e.stdout, "stopped serving %s\n", root)
	if stop := stopCause(ctx); stop != nil {
		return stop
	}
	return nil
}

// stopOr is the stop signal that ended ctx, or err.
func stopOr(ctx context.Context, err error) error {
	if stop := stopCause(ctx); stop != nil {
		return stop
	}
	return err
}

// portOf is the port of a TCP address.
func portOf(a net.Addr) int {
	if t, ok := a.(*net.TCPAddr); ok {
		return t.Port
	}
	return 0
}

// serveToken is the first line of file, or a new random token.
func serveToken(file string) (string, error) {
	if file == "" {
		b := make([]byte, 24)
		rand.Read(b)
		return hex.EncodeToString(b), nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return "", withCLIRemedy(err, "give a file that holds the token on its first line")
	}
	tok, _, _ := strings.Cut(string(data), "\n")
	tok = strings.TrimSpace(tok)
	if len(tok) < 16 || strings.ContainsAny(tok, " \t\r\"';,") {
		return "", &usageError{msg: fmt.Sprintf("--token-file %s: the first line must be a token of at least 16 characters, without blanks, quotes, ';' or ','", file)}
	}
	return tok, nil
}
