package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/internal/testdir"
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
			j := readJob(jobstore.JobDir(dir))
			libErr := errors.Join(j.SpecInfo.Err, j.StatusInfo.Err)
			if en.Name() == "ok" || en.Name() == "no-status" {
				require.NoError(t, libErr)
				requireCode(t, r, exitOK)
				require.Contains(t, r.stdout, "no problems")
				return
			}
			requireCode(t, r, exitUnsuccessful)
			require.Contains(t, r.stdout, "FAIL")
			require.Contains(t, r.stdout, "Remedy: ")
			for _, info := range []recordInfo{j.SpecInfo, j.StatusInfo} {
				if info.Err == nil {
					continue
				}
				subject, _, remedy := problem(info.Err, info.File)
				require.Contains(t, r.stdout, info.File+": ")
				require.Contains(t, r.stdout, subject)
				require.Contains(t, r.stdout, remedy)
			}
		})
		checked++
	}
	require.GreaterOrEqual(t, checked, 14, "the broken fixtures went missing")
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
				_, _, remedy := problem(libErr, target)
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
