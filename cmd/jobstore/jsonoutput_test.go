package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/clitest"
	"github.com/axqua/jobstore/internal/testdir"
	"github.com/stretchr/testify/require"
)

// errorKeys are the keys of the "error" object, as the help text documents
// them: every one is always present.
var errorKeys = []string{"kind", "subject", "message", "remedy"}

// collectErrors walks decoded JSON and returns every object under a key
// named "error" that is not null.
func collectErrors(v any) []map[string]any {
	var out []map[string]any
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			if m, ok := c.(map[string]any); ok && k == "error" {
				out = append(out, m)
			}
			out = append(out, collectErrors(c)...)
		}
	case []any:
		for _, c := range x {
			out = append(out, collectErrors(c)...)
		}
	}
	return out
}

// requireErrorObjects checks every error object in one JSON document:
// every documented key present, nothing else, and a message without the
// remedy.
func requireErrorObjects(t *testing.T, doc string) int {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal([]byte(doc), &v), doc)
	errs := collectErrors(v)
	for _, e := range errs {
		keys := make([]string, 0, len(e))
		for k := range e {
			keys = append(keys, k)
		}
		require.ElementsMatch(t, errorKeys, keys, "error object %v", e)
		msg, remedy := e["message"].(string), e["remedy"].(string)
		require.NotEmpty(t, msg)
		require.NotEmpty(t, remedy)
		require.NotContains(t, msg, "Remedy: ")
		require.NotContains(t, msg, remedy, "the message repeats the remedy")
		require.True(t, strings.HasPrefix(msg, "jobstore"), msg)
	}
	return len(errs)
}

func TestJSON_ErrorObjectsHaveEveryKeyAndNoRemedyInTheMessage(t *testing.T) {
	root := fixtureRoot(t)
	broken := filepath.Join(brokenRoot, "status-empty")
	for _, tc := range []struct {
		name       string
		args       []string
		code       int
		wantErrors int
	}{
		{"list", []string{"list", root, "--json"}, exitOK, 2},
		{"show", []string{"show", filepath.Join(root, "d-corrupt"), "--json"}, exitRuntime, 1},
		{"check root", []string{"check", brokenRoot, "--json"}, exitUnsuccessful, 16},
		{"check job", []string{"check", broken, "--json"}, exitUnsuccessful, 1},
		{"reconcile", []string{"reconcile", root, "--json"}, exitUnsuccessful, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runCLI(t, tc.args...)
			requireCode(t, r, tc.code)
			require.Equal(t, tc.wantErrors, requireErrorObjects(t, r.stdout))
		})
	}
}

func TestCheck_JSON(t *testing.T) {
	r := runCLI(t, "check", brokenRoot, "--json")
	requireCode(t, r, exitUnsuccessful)
	require.Empty(t, r.stderr)
	golden(t, "check_json.golden", normalize(r.stdout, rootPairs(brokenRoot)...))
	var out checkJSON
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out))
	require.True(t, out.IsRoot)
	require.Len(t, out.Jobs, 19)
	require.Equal(t, 16, out.Problems)
	for _, j := range out.Jobs {
		require.Equal(t, j.OK, len(j.Problems) == 0, j.ID)
	}

	r = runCLI(t, "check", filepath.Join(brokenRoot, "ok"), "--json")
	requireCode(t, r, exitOK)
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out))
	require.False(t, out.IsRoot)
	require.Equal(t, []checkJobJSON{{ID: "ok", Dir: filepath.Join(brokenRoot, "ok"), OK: true,
		Summary: "job.json v1, status.json v1 (succeeded)", Problems: []findingJSON{}}}, out.Jobs)
}

func TestReconcile_JSON(t *testing.T) {
	root := testdir.New(t)
	dead := clitest.Submit(t, root, "dead-runner")
	started := jobstore.Now()
	require.NoError(t, jobstore.WriteStatus(dead, jobstore.JobStatus{State: jobstore.Running, Seq: 2,
		StartedAt: &started, PID: 999999, Host: "gone-host"}))
	clitest.Submit(t, root, "waiting")
	broken := clitest.Submit(t, root, "broken")
	require.NoError(t, os.WriteFile(broken.StatusPath(), []byte{0, 0, 0, 0}, 0o644))

	r := runCLI(t, "reconcile", root, "--json")
	requireCode(t, r, exitUnsuccessful)
	require.Empty(t, r.stderr)
	golden(t, "reconcile_json.golden", normalize(r.stdout, rootPairs(root)...))
	var out reconcileJSON
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out))
	require.Equal(t, 1, out.MarkedLost)
	require.Equal(t, 1, out.Failed)
	require.Len(t, out.Jobs, 3)
}

// watch --json: one JSON object per line, each a status change or a note,
// the last one "end".
func TestWatch_JSONPrintsOneObjectPerLine(t *testing.T) {
	root := testdir.New(t)
	dir := clitest.RunJob(t, root, "broke", jobstore.Outcome{State: jobstore.Failed, Error: "boom", Remedy: "retry"})
	r := runCLI(t, "watch", string(dir), "--json")
	requireCode(t, r, exitUnsuccessful)
	require.Empty(t, r.stderr)
	compact := regexp.MustCompile(`"pid":\d+`).ReplaceAllString(r.stdout, `"pid":"PID"`)
	compact = regexp.MustCompile(`"host":"[^"]*"`).ReplaceAllString(compact, `"host":"HOST"`)
	golden(t, "watch_json.golden", normalize(compact, rootPairs(root)...))

	var events []watchEventJSON
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	for sc.Scan() {
		var ev watchEventJSON
		require.NoError(t, json.Unmarshal(sc.Bytes(), &ev), "each line is one JSON object: %s", sc.Text())
		var keys map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &keys))
		require.Len(t, keys, 5, "every key is always present: %s", sc.Text())
		events = append(events, ev)
	}
	require.Len(t, events, 2)
	require.Equal(t, "status", events[0].Event)
	require.Equal(t, "end", events[1].Event)
	require.Equal(t, jobstore.Failed, events[1].Status.State)
	require.Equal(t, "job broke failed after DUR: boom. Remedy: retry", normalize(events[1].Message))

	// A note carries the reason as an error object.
	dir = clitest.Submit(t, root, "torn")
	require.NoError(t, os.WriteFile(dir.StatusPath(), []byte(`{"state": "runn`), 0o644))
	w := newWatcher(nil, nil)
	w.asJSON, w.id = true, "torn"
	var b strings.Builder
	w.out = &b
	_, err := jobstore.ReadStatus(dir)
	w.noteErr(err, "unreadable for now")
	require.Equal(t, 1, requireErrorObjects(t, b.String()))
}

// A ROOT that holds entries but no job is refused, with exit 3; an empty
// ROOT is an empty root.
func TestRootWithoutJobs(t *testing.T) {
	notRoot := testdir.New(t)
	require.NoError(t, os.Mkdir(filepath.Join(notRoot, "photos"), 0o755))
	require.NoError(t, os.Mkdir(filepath.Join(notRoot, "src"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(notRoot, "notes.txt"), []byte("x"), 0o644))
	stale := filepath.Join(notRoot, "src", ".status.json123456")
	require.NoError(t, os.WriteFile(stale, []byte("{"), 0o644))

	empty := testdir.New(t)
	onlyIndex := testdir.New(t)
	require.NoError(t, os.Mkdir(filepath.Join(onlyIndex, ".trash"), 0o755))
	_, err := jobstore.RebuildIndex(onlyIndex) // a real, empty index.json
	require.NoError(t, err)

	for _, cmd := range [][]string{{"list"}, {"list", "--json"}, {"check"}, {"reconcile"}, {"reconcile", "--json"}} {
		t.Run(strings.Join(cmd, " "), func(t *testing.T) {
			r := runCLI(t, append([]string{cmd[0], notRoot}, cmd[1:]...)...)
			requireCode(t, r, exitRuntime)
			requireErrorLine(t, r)
			require.Contains(t, r.stderr, notRoot+": holds no jobs: none of its 3 entries is a job directory")
			require.Contains(t, r.stderr, "Remedy: give the directory that holds the job directories")
			require.Empty(t, r.stdout)

			for _, root := range []string{empty, onlyIndex} {
				r := runCLI(t, append([]string{cmd[0], root}, cmd[1:]...)...)
				requireCode(t, r, exitOK)
				require.Empty(t, r.stderr)
			}
		})
	}
	require.FileExists(t, stale, "nothing is changed under a root that holds no jobs")
	require.Equal(t, "no jobs under "+empty+"\n", runCLI(t, "list", empty).stdout)

	// One job among other entries makes it a root.
	clitest.Submit(t, notRoot, "j")
	requireCode(t, runCLI(t, "list", notRoot), exitOK)
}
