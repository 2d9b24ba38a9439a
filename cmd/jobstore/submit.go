package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/user"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/jobview"
	"github.com/axqua/jobstore/cmd/jobstore/internal/remedy"
)

func submitCmd() *command {
	return &command{
		name:    "submit",
		args:    "ROOT --kind KIND [--params JSON|@FILE] [--label KEY=VALUE]... [--id ID] [--by NAME] [--create] [--max-attempts N] [--backoff D] [--max-backoff D] [--not-before TIME] [--priority N] [--timeout D] | ROOT --jsonl [--by NAME] [--create]",
		summary: "submit a job: write ROOT/ID/job.json and status.json; print the ID",
		doc: `Submits a job under ROOT: writes ROOT/ID/job.json once, and its status.json,
queued. Prints the new job's ID alone on one line, for scripts.

Examples:
  ID=$(jobstore submit /srv/jobs --kind render --params '{"frame": 1}')
  jobstore submit /srv/jobs --kind report --max-attempts 3 --not-before +2h
  jobstore submit /srv/jobs --jsonl < specs.jsonl

ROOT must exist (--create makes it): a mistyped ROOT is an error, not a new
root no worker watches. --params is a JSON value, @FILE, or @- for stdin, at
most 16 MiB. How and when the job runs is optional: --max-attempts (with
--backoff and --max-backoff), --not-before, --priority, --timeout. Durations
are Go durations (300ms, 90s, 1h30m); TIME is RFC 3339
(2026-12-01T02:00:00Z) or a duration from now with a plus sign (+2h).

--jsonl submits one job per line of stdin, each a JSON spec as job.json holds
it ({"kind": "render", "params": {"frame": 1}}), as one batch, and prints
their IDs in the order of the lines. Every line is checked before anything
is written: a line that is not a spec submits nothing.

Exit codes: 0 submitted; 2 bad arguments (missing --kind, invalid JSON, a bad
number, duration or time, a --jsonl line that is not a spec); 3 the job could
not be written (ROOT does not exist, the ID is taken, ...).
Details: docs/cli.md#submit`,
		minPos: 1, maxPos: 1, posNames: "ROOT",
		define: defineSubmit,
	}
}

// labelFlag collects repeated --label KEY=VALUE flags.
type labelFlag map[string]string

func (l labelFlag) String() string {
	keys := jobview.SortedKeys(l)
	for i, k := range keys {
		keys[i] = k + "=" + l[k]
	}
	return strings.Join(keys, ",")
}

// Type is pflag's name for the value: "value", as the usage text shows it.
func (l labelFlag) Type() string { return "value" }

func (l labelFlag) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	switch {
	case !ok || k == "":
		return fmt.Errorf("%q is not KEY=VALUE", s)
	case hasKey(l, k):
		return fmt.Errorf("label %q given twice", k)
	}
	l[k] = v
	return nil
}

func hasKey(m map[string]string, k string) bool { _, ok := m[k]; return ok }

func defineSubmit(fs *pflag.FlagSet) runFunc {
	kind := fs.String("kind", "", "what the job is, for the runner that picks it up (required)")
	params := fs.String("params", "", "the job's parameters: a JSON value, or @FILE, or @- for stdin")
	id := fs.String("id", "", "the job ID (default: generated, sortable by time)")
	by := fs.String("by", "", "who submits the job, for submitted_by (default: the current user)")
	create := fs.Bool("create", false, "make ROOT if it does not exist (without it, a missing ROOT is an error)")
	labels := labelFlag{}
	fs.Var(labels, "label", "a KEY=VALUE label (repeatable)")
	// Unset, these leave the spec's field zero (the library's default, and
	// job.json at its first schema version): hence flag values that print
	// no default of their own.
	var maxAttempts optInt
	var backoff, maxBackoff, timeout optDuration
	var notBefore timeFlag
	fs.Var(&maxAttempts, "max-attempts", "run the job up to `N` times while its attempts fail (default 1)")
	fs.Var(&backoff, "backoff", "the first retry's delay `D`, doubling per retry (default 10s)")
	fs.Var(&maxBackoff, "max-backoff", "the longest delay `D` between retries (default 10m)")
	fs.Var(&notBefore, "not-before", "start no earlier than `TIME`: RFC 3339, or +DURATION from now")
	priority := fs.Int("priority", 0, "higher `N` runs first")
	fs.Var(&timeout, "timeout", "an attempt longer than `D` fails \"timed out\" (default none)")
	jsonl := fs.Bool("jsonl", false, "submit one job per line of stdin, each a JSON spec as job.json holds it")
	return func(e *env, args, pos []string) error {
		if *jsonl {
			if err := checkOneJobFlags(fs, args); err != nil {
				return err
			}
			if *by == "" {
				*by = defaultSubmitter()
			}
			if !*create {
				if err := rootExists(pos[0]); err != nil {
					return err
				}
			}
			return submitLines{root: pos[0], by: *by}.run(e, os.Stdin)
		}
		if err := checkSchedule(args, maxAttempts.n, backoff.d, maxBackoff.d, timeout.d); err != nil {
			return err
		}
		if *kind == "" {
			return remedy.Usagef("--kind is required")
		}
		if *id != "" {
			if err := jobstore.ValidateJobID(*id); err != nil {
				_, what, _ := remedy.Problem(err, "job_id")
				return &remedy.UsageError{Msg: flagSpelling(args, "id") + ": " + what,
					Remedy: "choose an ID of letters, digits, '.', '_' and '-' that starts with a letter or digit"}
			}
		}
		if *by == "" {
			*by = defaultSubmitter()
		}
		opts := submitOptions{Root: pos[0], Params: *params, Create: *create,
			Spec: jobstore.JobSpec{ID: *id, Kind: *kind, SubmittedBy: *by, MaxAttempts: maxAttempts.n, Backoff: backoff.d,
				MaxBackoff: maxBackoff.d, NotBefore: notBefore.t, Priority: *priority, Timeout: timeout.d}}
		if len(labels) > 0 {
			opts.Spec.Labels = labels
		}
		return runSubmit(e, opts)
	}
}

// submitOptions are what "jobstore submit" is told for one job: ROOT, the
// spec its flags make, and where its params are.
type submitOptions struct {
	Root   string
	Spec   jobstore.JobSpec // the job but its params
	Params string           // a JSON value, @FILE, or @- for stdin; "": none
	Create bool             // make Root if it does not exist
}

// runSubmit submits opts.Spec, with the params opts.Params gives, under
// opts.Root, and prints the job's ID. A missing root is an error unless
// opts.Create.
func runSubmit(e *env, opts submitOptions) error {
	spec := opts.Spec
	if opts.Params != "" {
		raw, err := readParams(opts.Params)
		if err != nil {
			return err
		}
		spec.Params = raw
	}
	if !opts.Create {
		if err := rootExists(opts.Root); err != nil {
			return err
		}
	}
	dir, err := jobstore.Submit(opts.Root, spec)
	if err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, dir.ID())
	return nil
}

// checkSchedule refuses what the library would: negative attempts or
// durations, a cap below the first delay; in the flags' words.
func checkSchedule(args []string, maxAttempts int, backoff, maxBackoff, timeout time.Duration) error {
	switch {
	case maxAttempts < 0:
		return remedy.Usagef("%s must be 1 or more (0: the default, 1), got %d", flagSpelling(args, "max-attempts"), maxAttempts)
	case maxBackoff > 0 && backoff > maxBackoff:
		return remedy.Usagef("%s (%v) must not be longer than %s (%v)", flagSpelling(args, "backoff"), backoff, flagSpelling(args, "max-backoff"), maxBackoff)
	}
	for _, d := range []struct {
		name string
		d    time.Duration
	}{{"backoff", backoff}, {"max-backoff", maxBackoff}, {"timeout", timeout}} {
		switch {
		case d.d < 0:
			return remedy.Usagef("%s must be positive, got %v", flagSpelling(args, d.name), d.d)
		case d.d > 0 && d.d < time.Millisecond:
			return remedy.Usagef("%s must be at least 1ms (job.json keeps milliseconds), got %v", flagSpelling(args, d.name), d.d)
		}
	}
	return nil
}

// optInt and optDuration are flag values whose unset zero prints as
// nothing: their default is the library's, said in the usage text.
type optInt struct{ n int }

func (f *optInt) String() string {
	if f.n == 0 {
		return ""
	}
	return strconv.Itoa(f.n)
}

// Type is pflag's name for the value: "value", as the usage text shows it.
func (f *optInt) Type() string { return "value" }

func (f *optInt) Set(v string) (err error) {
	f.n, err = strconv.Atoi(v)
	if err != nil {
		return fmt.Errorf("%q is not a whole number", v)
	}
	return nil
}

type optDuration struct{ d time.Duration }

func (f *optDuration) String() string {
	if f.d == 0 {
		return ""
	}
	return f.d.String()
}

// Type is pflag's name for the value: "value", as the usage text shows it.
func (f *optDuration) Type() string { return "value" }

func (f *optDuration) Set(v string) (err error) {
	f.d, err = time.ParseDuration(v)
	if err != nil {
		return fmt.Errorf("%q is not a duration (300ms, 90s, 1h30m)", v)
	}
	return nil
}

// timeFlag is --not-before: an RFC 3339 time, or "+D", D (a Go duration)
// from now.
type timeFlag struct{ t time.Time }

func (f *timeFlag) String() string {
	if f.t.IsZero() {
		return ""
	}
	return f.t.Format(time.RFC3339)
}

// Type is pflag's name for the value: "value", as the usage text shows it.
func (f *timeFlag) Type() string { return "value" }

func (f *timeFlag) Set(v string) error {
	if rest, ok := strings.CutPrefix(v, "+"); ok {
		d, err := time.ParseDuration(rest)
		if err != nil || d < 0 {
			return fmt.Errorf("%q is not +DURATION (+90s, +2h30m)", v)
		}
		f.t = time.Now().Add(d).UTC()
		return nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return fmt.Errorf("%q is not an RFC 3339 time (2026-12-01T02:00:00Z) or +DURATION (+2h)", v)
	}
	f.t = t
	return nil
}

// rootExists refuses a root that does not exist: jobstore.Submit would
// make it, and a job submitted into a mistyped path waits there for a
// worker that never looks. Anything else Submit judges itself.
func rootExists(root string) error {
	_, err := os.Stat(root)
	if !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err // the path is the error's own
	}
	return remedy.WithCLIRemedy(&jobstore.Error{Op: "submit", Path: root, Err: err, Msg: "no such root: nothing was submitted"},
		"check the path: ROOT is the directory the workers take jobs from; add --create to make a new root")
}

// readParams reads --params: inline JSON, @FILE or @-. A value longer than
// a whole record may be (jobstore.DefaultMaxSize) is refused after reading
// one byte more than that, never all of it.
func readParams(arg string) (json.RawMessage, error) {
	data, from := []byte(arg), "the value"
	if name, ok := strings.CutPrefix(arg, "@"); ok {
		var err error
		if name == "-" {
			data, err = readAtMost(os.Stdin, jobstore.DefaultMaxSize)
			from = "stdin"
		} else {
			data, err = readFileAtMost(name, jobstore.DefaultMaxSize)
			from = "file " + name
		}
		if err != nil {
			return nil, &remedy.UsageError{Msg: fmt.Sprintf("--params: %v", err), Remedy: "give a readable file after '@'"}
		}
	}
	if len(data) > jobstore.DefaultMaxSize {
		return nil, &remedy.UsageError{Msg: fmt.Sprintf("--params: %s is larger than %d bytes, the most a job record may hold", from, jobstore.DefaultMaxSize),
			Remedy: "keep bulky data in a file and give its path in --params"}
	}
	if !json.Valid(data) {
		return nil, &remedy.UsageError{Msg: fmt.Sprintf("--params: %s is not valid JSON", from),
			Remedy: `give one JSON value, e.g. --params '{"frames": 30}'`}
	}
	return json.RawMessage(data), nil
}

// readAtMost reads r to its end, but no more than limit+1 bytes: a longer
// input comes back limit+1 bytes long, which is enough to refuse it.
func readAtMost(r io.Reader, limit int64) ([]byte, error) {
	return io.ReadAll(io.LimitReader(r, limit+1))
}

// readFileAtMost is readAtMost of the named file.
func readFileAtMost(name string, limit int64) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAtMost(f, limit)
}

// defaultSubmitter is the user name, or "" when the system cannot say.
func defaultSubmitter() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return ""
}
