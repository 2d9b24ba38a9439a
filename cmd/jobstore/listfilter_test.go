package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/jobview"
	"github.com/axqua/jobstore/cmd/jobstore/internal/termtext"
	"github.com/stretchr/testify/require"
)

// listIDs runs list --json with flags and returns the IDs, in order.
func listIDs(t *testing.T, root string, flags ...string) []string {
	t.Helper()
	r := runCLI(t, append([]string{"list", root, "--json"}, flags...)...)
	requireCode(t, r, exitOK)
	var out jobview.ListJSON
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out))
	ids := []string{}
	for _, j := range out.Jobs {
		ids = append(ids, j.ID)
	}
	return ids
}

func TestList_FiltersOrderAndLimit(t *testing.T) {
	root := fixtureRoot(t) // a-queued (team=vfx), b-done, c-failed, d-corrupt, e-newer
	_, err := jobstore.Submit(root, jobstore.JobSpec{ID: "f-encode", Kind: "encode", Labels: map[string]string{"team": "vfx", "prio": "low"}})
	require.NoError(t, err)
	for _, c := range []struct {
		flags []string
		want  []string
	}{
		{nil, []string{"a-queued", "b-done", "c-failed", "d-corrupt", "e-newer", "f-encode"}},
		{[]string{"--state", "queued"}, []string{"a-queued", "f-encode"}},
		{[]string{"--state", "failed,succeeded"}, []string{"b-done", "c-failed"}},
		{[]string{"--state", "failed", "--state", "unreadable"}, []string{"c-failed", "d-corrupt", "e-newer"}},
		{[]string{"--kind", "encode"}, []string{"f-encode"}},
		{[]string{"--label", "team=vfx"}, []string{"a-queued", "f-encode"}},
		{[]string{"--label", "team=vfx", "--label", "prio=high"}, []string{"a-queued"}},
		{[]string{"--search", "DISK FULL"}, []string{"c-failed"}},
		{[]string{"--newest"}, []string{"f-encode", "e-newer", "d-corrupt", "c-failed", "b-done", "a-queued"}},
		{[]string{"--newest", "--limit", "2"}, []string{"f-encode", "e-newer"}},
		{[]string{"--oldest", "--limit", "1", "--kind", "render"}, []string{"a-queued"}},
		{[]string{"--kind", "nothing"}, []string{}},
	} {
		t.Run(strings.Join(c.flags, " "), func(t *testing.T) {
			require.Equal(t, c.want, listIDs(t, root, c.flags...))
		})
	}

	// The table says what a limit or a filter leaves out.
	r := runCLI(t, "list", root, "--limit", "2")
	requireCode(t, r, exitOK)
	require.Contains(t, r.stdout, "4 more not shown (--limit 2)")
	r = runCLI(t, "list", root, "--kind", "nothing")
	requireCode(t, r, exitOK)
	require.Equal(t, "no jobs under "+root+" match (6 jobs in all)\n", r.stdout)
}

func TestFitTable_MessageGetsWhatIsLeftOfTheLine(t *testing.T) {
	now := time.Now()
	p := 0.5
	long := strings.Repeat("frame rendered; ", 20)
	entries := []jobstore.Entry{{Dir: "/r/a", Spec: &jobstore.JobSpec{Kind: "render", SubmittedAt: now},
		Status: &jobstore.JobStatus{State: jobstore.Running, Progress: &p, Message: long, UpdatedAt: now}}}
	rows := tableRows(entries, now, func(jobstore.JobDir) (*jobstore.CancelRequest, jobview.RecordInfo) { return nil, jobview.RecordInfo{} })
	for _, width := range []int{200, 120, 80, 60, 40} {
		lines := fitTable(rows, width-1)
		for _, l := range lines {
			require.LessOrEqual(t, termtext.Cells(l), width-1, "width %d: %q", width, l)
		}
		require.Contains(t, lines[1], "running")
		if width >= 80 {
			require.Contains(t, lines[0], "MESSAGE", "width %d", width)
			require.Contains(t, lines[1], "frame rendered;", "width %d", width)
		}
	}
}

func TestScreenLines_ShortTerminalShowsRunningAndFailedJobsFirst(t *testing.T) {
	now := time.Now()
	var entries []jobstore.Entry
	add := func(id string, state jobstore.State) {
		entries = append(entries, jobstore.Entry{Dir: jobstore.JobDir("/r/" + id), Spec: &jobstore.JobSpec{Kind: "k", SubmittedAt: now},
			Status: &jobstore.JobStatus{State: state, UpdatedAt: now}})
	}
	for i := range 20 {
		add("done-"+string(rune('a'+i)), jobstore.Succeeded)
	}
	add("zz-failed", jobstore.Failed)
	add("zz-running", jobstore.Running)
	none := func(jobstore.JobDir) (*jobstore.CancelRequest, jobview.RecordInfo) { return nil, jobview.RecordInfo{} }
	lines := screenLines("/r", entries, now, none, "Ctrl-C stops", 100, 8)
	text := strings.Join(lines, "\n")
	require.Contains(t, text, "zz-running")
	require.Contains(t, text, "zz-failed")
	require.Contains(t, text, "more lines")
	require.Less(t, strings.Index(text, "zz-running"), strings.Index(text, "zz-failed"))
	// A tall terminal keeps List's order.
	lines = screenLines("/r", entries, now, none, "Ctrl-C stops", 100, 40)
	require.Contains(t, lines[1], "done-a")
}
