package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/jobview"
	"github.com/axqua/jobstore/cmd/jobstore/internal/termtext"
	"github.com/axqua/jobstore/internal/testdir"

	"github.com/stretchr/testify/require"
)

// wideRows are list table rows whose IDs, kinds and messages hold wide
// (CJK) characters, combining marks and emoji: 日本語 is six cells, é
// written as e and a combining acute accent is one, 🚀 is two.
func wideRows() [][tableCols]string {
	return [][tableCols]string{
		{"日本語-1", "レンダー", "running", "50%", "-", "3m", "進行中"},
		{"cafe\u0301-2", "e\u0301", "queued", "-", "-", "2m", ""},
		{"🚀-3", "🎬kind", "succeeded", "100%", "-", "1m", "done ✅"},
		{"plain-4", "k", "failed", "-", "-", "10m", "boom"},
	}
}

// The columns line up as a terminal draws them, whatever the cells hold:
// each line below is written out with the blanks a terminal needs.
func TestFitTable_AlignsWideCombiningAndEmojiCells(t *testing.T) {
	want := []string{
		"ID        KIND      STATE      PROGRESS  UPDATED  AGE  MESSAGE",
		"日本語-1  レンダー  running    50%       -        3m   進行中",
		"cafe\u0301-2    e\u0301         queued     -         -        2m",
		"🚀-3      🎬kind    succeeded  100%      -        1m   done ✅",
		"plain-4   k         failed     -         -        10m  boom",
	}
	require.Equal(t, want, fitTable(wideRows(), unlimitedCells))
}

// Fitted to a terminal, every line stays within the width and STATE
// starts at the same cell on every line.
func TestFitTable_WideCellsStayAlignedWhenFitted(t *testing.T) {
	for budget := 30; budget <= 70; budget++ {
		lines := fitTable(wideRows(), budget)
		col := -1
		for i, l := range lines {
			require.LessOrEqual(t, termtext.Cells(l), budget, "%q", l)
			state := "STATE"
			if i > 0 {
				state = wideRows()[i-1][colState]
			}
			at := strings.Index(l, state)
			require.GreaterOrEqual(t, at, 0, "budget %d: %q has no %q", budget, l, state)
			if col < 0 {
				col = termtext.Cells(l[:at])
			}
			require.Equal(t, col, termtext.Cells(l[:at]), "budget %d: STATE of %q starts elsewhere", budget, l)
		}
	}
}

// list and list --watch print one table: on a terminal wide enough, the
// lines list --watch draws are the lines list prints, wide cells and all.
func TestScreenLines_DrawTheTableListPrints(t *testing.T) {
	now := time.Now()
	var entries []jobstore.Entry
	for _, r := range wideRows() {
		entries = append(entries, jobstore.Entry{Dir: jobstore.JobDir("/r/" + r[colID]),
			Spec:   &jobstore.JobSpec{Kind: r[colKind], SubmittedAt: now.Add(-time.Minute)},
			Status: &jobstore.JobStatus{State: jobstore.Running, UpdatedAt: now, Message: r[colMessage]}})
	}
	none := func(jobstore.JobDir) (*jobstore.CancelRequest, jobview.RecordInfo) { return nil, jobview.RecordInfo{} }
	var printed strings.Builder
	writeTable(&printed, "/r", entries, now, none, unlimitedCells)
	drawn := screenLines("/r", entries, now, none, "Ctrl-C stops", 200, 50)
	want := strings.Split(strings.TrimSuffix(printed.String(), "\n"), "\n")
	require.Len(t, want, len(entries)+1)
	require.Equal(t, want, drawn[:len(want)])
	require.Contains(t, want[1], "日本語-1  レンダー  running")
}

// jobstore list prints kinds of wide, combining and emoji characters with
// every column after KIND starting at the same terminal column.
func TestList_WideKindsKeepTheColumnsAligned(t *testing.T) {
	root := testdir.New(t)
	kinds := []string{"レンダー", "e\u0301", "🎬-clip", "plain"}
	for i, kind := range kinds {
		submitKind(t, root, fmt.Sprintf("job-%d", i), kind, "")
	}
	r := runCLI(t, "list", root)
	requireCode(t, r, exitOK)
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	require.Len(t, lines, len(kinds)+1, r.stdout)
	for i, l := range lines {
		state := "STATE"
		if i > 0 {
			state = "queued"
			require.Contains(t, l, kinds[i-1])
		}
		at := strings.Index(l, state)
		require.GreaterOrEqual(t, at, 0, "%q", l)
		require.Equal(t, termtext.Cells(lines[0][:strings.Index(lines[0], "STATE")]), termtext.Cells(l[:at]), "STATE of %q starts elsewhere:\n%s", l, r.stdout)
	}
	require.Contains(t, r.stdout, "job-0  レンダー  queued")
}
