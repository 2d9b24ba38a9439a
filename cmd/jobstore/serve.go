package main

import (
	"context"

	"github.com/axqua/jobstore/cmd/jobstore/internal/serve"
	"github.com/spf13/pflag"
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

func defineServe(fs *pflag.FlagSet) runFunc {
	var opts serve.Options
	fs.StringVar(&opts.Addr, "addr", serve.DefaultAddr, "listen on HOST:PORT (port 0: a free port)")
	fs.BoolVar(&opts.ReadOnly, "read-only", false, "show no action and refuse every POST")
	fs.StringVar(&opts.TokenFile, "token-file", "", "read the access token from the first line of FILE instead of making one")
	return func(e *env, args, pos []string) error {
		opts.Root, opts.Stdout, opts.Stderr = pos[0], e.stdout, e.stderr
		ctx, release := untilStopped(context.Background())
		defer release()
		err := serve.Run(ctx, opts)
		if stop := stopCause(ctx); stop != nil {
			return stop
		}
		return err
	}
}
