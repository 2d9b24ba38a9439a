package main

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/clitest"
	"github.com/axqua/jobstore/cmd/jobstore/internal/jobview"
	"github.com/axqua/jobstore/internal/testdir"
	"github.com/stretchr/testify/require"
)

func TestShow_FinishedJob(t *testing.T) {
	root := fixtureRoot(t)
	for _, id := range []string{"a-queued", "b-done", "c-failed"} {
		t.Run(id, func(t *testing.T) {
			dir := filepath.Join(root, id)
			r := runCLI(t, "show", dir)
			requireCode(t, r, exitOK)
			require.Empty(t, r.stderr)
			golden(t, "show_"+id+".golden", normalize(r.stdout, rootPairs(root)...))
		})
	}
}

func TestShow_JSON(t *testing.T) {
	root := fixtureRoot(t)
	dir := filepath.Join(root, "b-done")
	r := runCLI(t, "show", dir, "--json")
	requireCode(t, r, exitOK)
	golden(t, "show_json.golden", normalize(r.stdout, rootPairs(root)...))

	var out jobview.ShowJSON
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out))
	spec, err := jobstore.ReadSpec(jobstore.JobDir(dir))
	require.NoError(t, err)
	st, err := jobstore.ReadStatus(jobstore.JobDir(dir))
	require.NoError(t, err)
	require.Equal(t, spec, *out.Spec)
	require.Equal(t, *st, *out.Status)
	require.Equal(t, 1, *out.SpecRecord.Written, "a spec without retries or schedule is written as version 1")
	require.Equal(t, jobstore.StatusSchemaVersion, out.StatusRecord.Current)
	require.False(t, out.StatusRecord.Migrated)
}

// An unreadable status still shows the spec; the error goes to stderr as
// one line and the exit code is 3.
func TestShow_UnreadableStatusShowsWhatItCanAndFails(t *testing.T) {
	root := fixtureRoot(t)
	for _, tc := range []struct{ id, want string }{
		{"d-corrupt", "JSON ends early"},
		{"e-newer", "schema_version 9"},
	} {
		t.Run(tc.id, func(t *testing.T) {
			r := runCLI(t, "show", filepath.Join(root, tc.id))
			requireCode(t, r, exitRuntime)
			requireErrorLine(t, r)
			require.Contains(t, r.stderr, tc.want)
			require.Contains(t, r.stdout, "kind         render")
			require.Contains(t, r.stdout, "status.json  unreadable: ")

			r = runCLI(t, "show", filepath.Join(root, tc.id), "--json")
			requireCode(t, r, exitRuntime)
			var out jobview.ShowJSON
			require.NoError(t, json.Unmarshal([]byte(r.stdout), &out))
			require.NotNil(t, out.Spec)
			require.Nil(t, out.Status)
			require.NotNil(t, out.StatusRecord.ErrJSON)
		})
	}
}

func TestShow_NoStatusYet(t *testing.T) {
	root := testdir.New(t)
	dir := clitest.Submit(t, root, "j")
	require.NoError(t, removeFile(dir.StatusPath()))
	r := runCLI(t, "show", string(dir))
	requireCode(t, r, exitOK)
	require.Contains(t, r.stdout, "status.json  absent: nothing has run yet")
}

// The migration note: a record read by migrating it says so, with both
// versions; a current one says "current".
func TestVersionText_SaysWhetherAMigrationWasApplied(t *testing.T) {
	v0 := 0
	require.Equal(t, "schema_version 0, migrated to 1 in memory (the file is unchanged)",
		jobview.VersionText(jobview.RecordInfo{File: "status.json", Present: true, Written: &v0, Current: 1, Migrated: true}))
	v1 := 1
	require.Equal(t, "schema_version 1 (current)",
		jobview.VersionText(jobview.RecordInfo{File: "status.json", Present: true, Written: &v1, Current: 1}))
}

func TestWrittenVersion(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		want any
	}{
		{`{"schema_version": 1}`, 1},
		{`{"schema_version": 0}`, 0},
		{`{}`, 0},
		{`{"schema_version": null}`, 0},
		{`{"schema_version": "1"}`, nil},
		{`{"schema_version": 1.5}`, nil},
		{`[]`, nil},
	} {
		got := jobview.WrittenVersion([]byte(tc.raw))
		if tc.want == nil {
			require.Nil(t, got, tc.raw)
		} else {
			require.Equal(t, tc.want, *got, tc.raw)
		}
	}
}
