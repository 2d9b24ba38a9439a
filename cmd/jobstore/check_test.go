package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/clitest"
	"github.com/axqua/jobstore/cmd/jobstore/internal/jobview"
	"github.com/axqua/jobstore/cmd/jobstore/internal/remedy"
	"github.com/axqua/jobstore/internal/testdir"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const brokenRoot = "testdata/broken" // one job directory per broken record; see its README

// maxFixtureSize: larger files in ../../testdata are not records.
const maxFixtureSize = 1 << 20

func TestCheck_BrokenRootReportsEachProblemWithSubjectAndRemedy(t *testing.T) {
	r := runCLI(t, "check", brokenRoot)
	requireCode(t, r, exitUnsuccessful)
	require.Empty(t, r.stderr)
	golden(t, "check_broken.golden", normalize(r.stdout, rootPairs(brokenRoot)...))
	for _, line := range strings.Split(r.stdout, "\n") {
		if strings.HasPrefix(line, "FAIL") {
			require.Contains(t, line, ". Remedy: ", "every problem carries its remedy")
		}
	}
	require.NotContains(t, r.stdout, ".trash", "dot-names are not jobs")
}

// Each broken job directory alone: exit 1, and the FAIL line names the
// record and the subject the library's own error names.
func TestCheck_EachBrokenJobFailsWithTheLibrarysSubject(t *testing.T) {
	ents, err := os.ReadDir(brokenRoot)
	require.NoError(t, err)
	checked := 0
	for _, en := range ents {
		if !en.IsDir() || strings.HasPrefix(en.Name(), ".") {
			continue
		}
		dir := filepath.Join(brokenRoot, en.Name())
		t.Run(en.Name(), func(t *testing.T) {
			r := runCLI(t, "check", dir)
			j := jobview.ReadJob(jobstore.JobDir(dir))
			_, cancel := jobview.ReadCancel(jobstore.JobDir(dir))
			libErr := errors.Join(j.SpecInfo.Err, j.StatusInfo.Err, cancel.Err)
			if en.Name() == "ok" || en.Name() == "no-status" || en.Name() == "cancelled" {
				require.NoError(t, libErr)
				requireCode(t, r, exitOK)
				require.Contains(t, r.stdout, "no problems")
				return
			}
			requireCode(t, r, exitUnsuccessful)
			require.Contains(t, r.stdout, "FAIL")
			require.Contains(t, r.stdout, "Remedy: ")
			for _, info := range []jobview.RecordInfo{j.SpecInfo, j.StatusInfo, cancel} {
				if info.Err == nil {
					continue
				}
				subject, _, remedy := remedy.Problem(info.Err, info.File)
				require.Contains(t, r.stdout, info.File+": ")
				require.Contains(t, r.stdout, subject)
				require.Contains(t, r.stdout, remedy)
			}
		})
		checked++
	}
	require.GreaterOrEqual(t, checked, 18, "the broken fixtures went missing")
}

// The root package's testdata holds broken record files (empty, NUL-filled,
// truncated, {}{}, newer version, v0, ...). Each file there is placed as a
// job's status.json, then as its job.json, and check must agree with the
// library's decoder about it: exit 1 with the decoder's remedy when the
// library refuses the bytes, exit 0 (or a job_id mismatch) when it reads
// them.
func TestCheck_AgreesWithTheLibraryOnEachRecordFileOfRootTestdata(t *testing.T) {
	var files []string
	_ = filepath.WalkDir(filepath.Join("..", "..", "testdata"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && !strings.HasPrefix(d.Name(), ".") && !strings.HasSuffix(d.Name(), ".md") {
			if fi, err := d.Info(); err == nil && fi.Size() <= maxFixtureSize {
				files = append(files, p)
			}
		}
		return nil
	})
	if len(files) == 0 {
		t.Skip("no record files in ../../testdata yet; the fixtures of testdata/broken cover the same cases")
	}
	good := []byte(`{"schema_version": 1, "job_id": "j", "kind": "k", "submitted_at": "2026-01-02T03:04:05+00:00"}`)
	for _, file := range files {
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		for _, target := range []string{jobstore.StatusFile, jobstore.SpecFile} {
			t.Run(filepath.Base(file)+"_as_"+target, func(t *testing.T) {
				t.Parallel()
				dir := filepath.Join(testdir.New(t), "j")
				require.NoError(t, os.Mkdir(dir, 0o755))
				var libErr error
				if target == jobstore.StatusFile {
					require.NoError(t, os.WriteFile(filepath.Join(dir, jobstore.SpecFile), good, 0o644))
					_, _, libErr = jobstore.DecodeStatus(data)
				} else {
					_, _, libErr = jobstore.DecodeSpec(data)
				}
				require.NoError(t, os.WriteFile(filepath.Join(dir, target), data, 0o644))
				r := runCLI(t, "check", dir)
				if libErr == nil {
					// The bytes decode; only a job_id that is not "j" can be a problem.
					if r.code == exitUnsuccessful {
						require.Contains(t, r.stdout, "job_id")
						return
					}
					requireCode(t, r, exitOK)
					return
				}
				requireCode(t, r, exitUnsuccessful)
				_, _, remedy := remedy.Problem(libErr, target)
				require.Contains(t, r.stdout, target+": ")
				require.Contains(t, r.stdout, remedy)
			})
		}
	}
}

func TestCheck_FreshlySubmittedJobsHaveNoProblems(t *testing.T) {
	root := testdir.New(t)
	for _, id := range []string{"a", "b"} {
		requireCode(t, runCLI(t, "submit", root, "--kind", "k", "--id", id), exitOK)
	}
	r := runCLI(t, "check", root)
	requireCode(t, r, exitOK)
	require.Contains(t, r.stdout, "checked 2 jobs under")
	require.Contains(t, r.stdout, "no problems")
}

func TestCheck_CorruptIndexIsAProblemWithARebuildRemedy(t *testing.T) {
	root := testdir.New(t)
	requireCode(t, runCLI(t, "submit", root, "--kind", "k", "--id", "a"), exitOK)
	require.NoError(t, os.WriteFile(filepath.Join(root, jobstore.IndexFile), []byte(`{"jobs": [`), 0o644))
	r := runCLI(t, "check", root)
	requireCode(t, r, exitUnsuccessful)
	require.Contains(t, r.stdout, "FAIL  index.json")

	requireCode(t, runCLI(t, "list", root, "--rebuild"), exitOK)
	requireCode(t, runCLI(t, "check", root), exitOK)
}

// cancelCases are the ways a cancel.json can be unreadable: the fixtures of
// brokenRoot, and the files no repository can hold (a FIFO, a symbolic
// link, a file of 17 MiB), made here. Each returns the job directory.
func cancelCases(t *testing.T) map[string]func(t *testing.T) jobstore.JobDir {
	fixture := func(name string) func(t *testing.T) jobstore.JobDir {
		return func(t *testing.T) jobstore.JobDir { return jobstore.JobDir(filepath.Join(brokenRoot, name)) }
	}
	made := func(place func(t *testing.T, path string)) func(t *testing.T) jobstore.JobDir {
		return func(t *testing.T) jobstore.JobDir {
			dir := clitest.Submit(t, testdir.New(t), "j")
			place(t, dir.CancelPath())
			return dir
		}
	}
	return map[string]func(t *testing.T) jobstore.JobDir{
		"corrupt":      fixture("cancel-corrupt"),
		"newer schema": fixture("cancel-newer"),
		"wrong job_id": fixture("cancel-wrong-id"),
		"17 MiB of space": made(func(t *testing.T, path string) {
			require.NoError(t, os.WriteFile(path, bytes.Repeat([]byte(" "), 17<<20), 0o644))
		}),
		"symbolic link to a valid request": made(func(t *testing.T, path string) {
			target := filepath.Join(testdir.New(t), "cancel.json")
			require.NoError(t, os.WriteFile(target, []byte(`{"schema_version": 1, "job_id": "j", "requested_at": "2026-01-02T03:04:06Z"}`), 0o644))
			if err := os.Symlink(target, path); err != nil {
				t.Skipf("no symbolic links here: %v", err)
			}
		}),
		"FIFO": made(func(t *testing.T, path string) {
			if err := clitest.Mkfifo(path); err != nil {
				t.Skipf("no FIFOs here: %v", err)
			}
		}),
	}
}

// check reads cancel.json exactly as show does: each unreadable one is a
// problem of check (exit 1) with the very error show reports for it, and a
// FIFO never makes either wait for a writer (the run's timeout would kill
// it and fail the test).
func TestCheck_ReportsAnUnreadableCancelJSONAsShowDoes(t *testing.T) {
	for name, mk := range cancelCases(t) {
		t.Run(name, func(t *testing.T) {
			dir := mk(t)
			r := runCLI(t, "show", string(dir), "--json")
			requireCode(t, r, exitOK)
			var shownRecord struct {
				CancelRecord struct {
					Error *remedy.ErrorJSON `json:"error"`
				} `json:"cancel_record"`
			}
			require.NoError(t, json.Unmarshal([]byte(r.stdout), &shownRecord))
			require.NotNil(t, shownRecord.CancelRecord.Error, "show reports it: %s", r.stdout)

			r = runCLI(t, "check", string(dir), "--json")
			requireCode(t, r, exitUnsuccessful)
			var checked checkJSON
			require.NoError(t, json.Unmarshal([]byte(r.stdout), &checked))
			require.Len(t, checked.Jobs, 1)
			require.Equal(t, []findingJSON{{File: jobstore.CancelFile, Error: shownRecord.CancelRecord.Error}},
				checked.Jobs[0].Problems, "check's problem is show's error")
			require.Equal(t, 1, checked.Problems)

			r = runCLI(t, "check", string(dir))
			requireCode(t, r, exitUnsuccessful)
			require.Contains(t, r.stdout, "FAIL  "+dir.ID()+"  "+jobstore.CancelFile+": ")
			require.Contains(t, r.stdout, shownRecord.CancelRecord.Error.Remedy)
		})
	}
}

// summaryRE finds each record's part of a check summary: "job.json v1",
// "status.json v3, unreadable", "cancel.json unreadable", "job.json absent".
var summaryRE = regexp.MustCompile(`(job\.json|status\.json|cancel\.json) (?:v(\d+)(?:, migrated to v\d+ in memory)?(, unreadable)?|(unreadable)|(absent))`)

// check's summary of a job says what its files hold, read here from the
// files themselves: the schema_version written in each (never the version
// this jobstore reads instead), "unreadable" for one that fails, "absent"
// for one that is not there; cancel.json is named when it exists.
func TestCheck_SummarySaysWhatTheFilesHold(t *testing.T) {
	dirs := map[string]jobstore.JobDir{}
	ents, err := os.ReadDir(brokenRoot)
	require.NoError(t, err)
	for _, en := range ents {
		if en.IsDir() && !strings.HasPrefix(en.Name(), ".") {
			dirs[en.Name()] = jobstore.JobDir(filepath.Join(brokenRoot, en.Name()))
		}
	}
	for name, mk := range cancelCases(t) {
		if dir := mk(t); !strings.HasPrefix(string(dir), brokenRoot) {
			dirs["made "+name] = dir
		}
	}
	require.GreaterOrEqual(t, len(dirs), 20, "the broken fixtures went missing")
	for name, dir := range dirs {
		t.Run(name, func(t *testing.T) {
			r := runCLI(t, "check", string(dir), "--json")
			var out checkJSON
			require.NoError(t, json.Unmarshal([]byte(r.stdout), &out), r.stdout)
			require.Len(t, out.Jobs, 1)
			j := out.Jobs[0]
			failed := map[string]*remedy.ErrorJSON{}
			for _, p := range j.Problems {
				failed[p.File] = p.Error
			}
			said := map[string][]string{}
			for _, m := range summaryRE.FindAllStringSubmatch(j.Summary, -1) {
				require.NotContains(t, said, m[1], "summary %q", j.Summary)
				said[m[1]] = m
			}
			for _, file := range []string{jobstore.SpecFile, jobstore.StatusFile, jobstore.CancelFile} {
				data, err := readNoFollow(filepath.Join(string(dir), file))
				m := said[file]
				switch {
				case errors.Is(err, fs.ErrNotExist) && file == jobstore.CancelFile:
					require.Nil(t, m, "%s is absent: the summary %q does not name it", file, j.Summary)
				case errors.Is(err, fs.ErrNotExist):
					require.NotNil(t, m, "summary %q", j.Summary)
					require.Equal(t, "absent", m[5], "summary %q", j.Summary)
				default:
					require.NotNil(t, m, "summary %q names %s", j.Summary, file)
					v, verr := jobstore.SchemaVersionOf(data)
					if err != nil || verr != nil {
						require.Equal(t, "unreadable", m[4], "%s holds no version: summary %q", file, j.Summary)
						break
					}
					require.Equal(t, strconv.Itoa(v), m[2], "%s holds schema_version %d: summary %q", file, v, j.Summary)
					if m[3] == ", unreadable" {
						require.NotNil(t, failed[file], "summary %q without a problem for %s", j.Summary, file)
					} else if failed[file] != nil {
						require.Equal(t, "job_id", failed[file].Subject, "read, but a problem: only a job_id that is not the directory's name")
					}
				}
			}
		})
	}
}

// readNoFollow reads path's bytes if it is a regular file; a link, a FIFO
// or anything else is an error (fs.ErrNotExist only when nothing is there).
func readNoFollow(path string) ([]byte, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is a %v", path, fi.Mode().Type())
	}
	return os.ReadFile(path)
}

// TestCheck_AJobWithoutStatusIsReportedAsNotQueued: a job whose writer left
// job.json alone (no queued status.json) is no problem, but check says that
// no worker starts it, on its line and in the summary, and counts it in
// JSON; a submitted job is not counted.
func TestCheck_AJobWithoutStatusIsReportedAsNotQueued(t *testing.T) {
	root := filepath.Join(testdir.New(t), "jobs")
	_, err := jobstore.Submit(root, jobstore.JobSpec{ID: "submitted", Kind: "render"})
	require.NoError(t, err)
	require.NoError(t, jobstore.WriteSpec(jobstore.JobDir(filepath.Join(root, "spec-only")), jobstore.JobSpec{ID: "spec-only", Kind: "render"}))

	r := runCLI(t, "check", root)
	requireCode(t, r, 0)
	assert.Regexp(t, `(?m)^ok\s+spec-only\s+job.json v1, status.json absent: not queued, no worker starts it$`, r.stdout)
	assert.Regexp(t, `(?m)^ok\s+submitted\s+job.json v1, status.json v1 \(queued\)$`, r.stdout)
	assert.Contains(t, r.stdout, "1 job without status.json (not queued): 'jobstore work' and StartNext pass such jobs over")

	r = runCLI(t, "check", "--json", root)
	requireCode(t, r, 0)
	var out struct {
		NotQueued int `json:"not_queued"`
		Problems  int `json:"problems"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out), "%s", r.stdout)
	assert.Equal(t, 1, out.NotQueued)
	assert.Zero(t, out.Problems)
}
