package jobstore_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/internal/prereq"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// update rewrites the golden files and the files derived from them:
//
//	go test -run 'TestGolden|TestFuzzCorpus' -update
var update = flag.Bool("update", false, "rewrite testdata's golden files, damage fixtures and fuzz seeds")

func goldenSpec() jobstore.JobSpec {
	return jobstore.JobSpec{ID: "j1", Kind: "render",
		Params:      json.RawMessage(`{"frames": [1, 2, 3], "scene": "café <night> & day", "scale": 0.5}`),
		SubmittedAt: submitted, SubmittedBy: "ana@example.org",
		Labels: map[string]string{"team": "vfx", "équipe": "✓"}}
}

func goldenStatus() jobstore.JobStatus {
	started, finished := submitted.Add(-5*time.Minute), submitted.Add(time.Second)
	return jobstore.JobStatus{JobID: "j1", State: jobstore.Failed, Seq: 42, Progress: ptr(0.75),
		Message: "frame 3/4 — naïve <ok> & \"done\"", UpdatedAt: finished, StartedAt: &started, FinishedAt: &finished,
		PID: 31337, Host: "render-node-7", ExitCode: ptr(3), Error: "out of memory", Remedy: "give the job more memory"}
}

// minimalStatus has only the fields that are always written.
func minimalStatus() jobstore.JobStatus {
	return jobstore.JobStatus{State: jobstore.Queued, UpdatedAt: submitted}
}

// checkGolden compares got with testdata/name, or rewrites it under -update.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run with -update to create it")
	assert.Equal(t, string(want), string(got), "%s differs; if the change is intended, run go test -update", path)
}

// TestGolden_RecordsAreWrittenByteForByte pins the bytes WriteSpec and
// WriteStatus write: field order, indent, escapes, timestamps, newline.
func TestGolden_RecordsAreWrittenByteForByte(t *testing.T) {
	dir := newJobDir(t, "j1")
	require.NoError(t, jobstore.WriteSpec(dir, goldenSpec()))
	checkGolden(t, "job.golden.json", readFile(t, dir.SpecPath()))

	require.NoError(t, jobstore.WriteStatus(dir, goldenStatus()))
	status := readFile(t, dir.StatusPath())
	checkGolden(t, "status.golden.json", status)

	fresh := newJobDir(t, "j1") // a new job: the minimal record would take the first one back
	require.NoError(t, jobstore.WriteSpec(fresh, goldenSpec()))
	require.NoError(t, jobstore.WriteStatus(fresh, minimalStatus()))
	checkGolden(t, "status.minimal.golden.json", readFile(t, fresh.StatusPath()))

	// The crash-damaged versions of the golden status.
	checkGolden(t, "status.truncated.json", status[:len(status)/2])
	checkGolden(t, "status.nul.json", make([]byte, 512))
	checkGolden(t, "status.empty.json", nil)
	checkGolden(t, "status.twovalues.json", []byte("{}{}"))
	checkGolden(t, "status.garbage.json", []byte("<html><body>502 Bad Gateway</body></html>\n"))
}

// TestTestdata_ReadStatusGivesTheDocumentedResult reads each status file of
// testdata, copied into a job directory, through ReadStatus.
func TestTestdata_ReadStatusGivesTheDocumentedResult(t *testing.T) {
	tests := []struct {
		file   string
		is     error  // nil: reads fine
		phrase string // in the error
	}{
		{"status.golden.json", nil, ""},
		{"status.minimal.golden.json", nil, ""},
		{"status.python.json", nil, ""},
		{"status.newer.json", jobstore.ErrNewerSchema, "written by a newer jobstore (schema_version 3); this version understands up to 2"},
		{"status.v0.json", jobstore.ErrNoMigration, "no migration from schema_version 0 to 1"},
		{"status.empty.json", jobstore.ErrCorrupt, "interrupted write"},
		{"status.nul.json", jobstore.ErrCorrupt, "interrupted write"},
		{"status.truncated.json", jobstore.ErrCorrupt, "interrupted write (truncated file)"},
		{"status.twovalues.json", jobstore.ErrCorrupt, "not one JSON value"},
		{"status.garbage.json", jobstore.ErrCorrupt, "not JSON at all"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			data := readFile(t, filepath.Join("testdata", tt.file))
			var head struct {
				JobID string `json:"job_id"`
			}
			_ = json.Unmarshal(data, &head)
			if head.JobID == "" {
				head.JobID = "j1"
			}
			dir := newJob(t, head.JobID)
			writeFile(t, dir.StatusPath(), data)
			st, err := jobstore.ReadStatus(dir, jobstore.WithRetries(2, 0))
			if tt.is == nil {
				require.NoError(t, err)
				assert.Equal(t, jobstore.StatusSchemaVersion, st.SchemaVersion)
				return
			}
			assert.Nil(t, st)
			assert.ErrorIs(t, err, tt.is)
			assert.ErrorContains(t, err, tt.phrase)
		})
	}
}

// pythonStatus and pythonSpec are the values make_python_fixtures.py writes.
func pythonStatus() *jobstore.JobStatus {
	started := time.Date(2026, 11, 30, 9, 30, 0, 0, time.UTC)
	finished := time.Date(2026, 11, 30, 9, 35, 40, 5000, time.UTC) // naive: taken as UTC
	return &jobstore.JobStatus{SchemaVersion: jobstore.StatusSchemaVersion, JobID: "py-job-1", State: jobstore.Failed, Seq: 42, Progress: ptr(0.75),
		Message: "frame 3/4 — naïve <ok> & \"done\"", UpdatedAt: time.Date(2026, 11, 30, 9, 35, 40, 123456000, time.UTC),
		StartedAt: &started, FinishedAt: &finished, PID: 31337, Host: "render-node-7", ExitCode: ptr(3),
		Error: "out of memory", Remedy: "give the job more memory"}
}

func pythonSpec() jobstore.JobSpec {
	return jobstore.JobSpec{SchemaVersion: jobstore.JobSchemaVersion, ID: "py-job-1", Kind: "render",
		Params:      json.RawMessage(`{"frames":[1,2,3],"scene":"caf\u00e9 <night> & day","scale":0.5}`),
		SubmittedAt: time.Date(2026, 11, 30, 9, 35, 40, 123456000, time.UTC), SubmittedBy: "ana@qgis",
		Labels: map[string]string{"team": "vfx", "équipe": "✓"}}
}

// TestPythonFixtures_ReadBackExactly: files written by Python's
// json.dump(indent=2), with isoformat timestamps (UTC, whole seconds,
// +05:30, naive), read back to exactly the values Python wrote.
func TestPythonFixtures_ReadBackExactly(t *testing.T) {
	dir := newJobDir(t, "py-job-1")
	require.NoError(t, os.MkdirAll(string(dir), 0o755))
	writeFile(t, dir.SpecPath(), readFile(t, filepath.Join("testdata", "job.python.json")))
	writeFile(t, dir.StatusPath(), readFile(t, filepath.Join("testdata", "status.python.json")))

	spec, err := jobstore.ReadSpec(dir)
	require.NoError(t, err)
	assert.Equal(t, pythonSpec(), spec)
	assert.JSONEq(t, `{"frames": [1, 2, 3], "scene": "café <night> & day", "scale": 0.5}`, string(spec.Params))

	st, err := jobstore.ReadStatus(dir)
	require.NoError(t, err)
	assert.Equal(t, pythonStatus(), st)
}

// python is the python3 interpreter itself, found once: PATH's python3 may
// be a launcher (pyenv's shim, a wrapper script) that takes 100 ms or more
// to start the real one. The tests run the interpreter directly, so that a
// script starts as fast as python3 can (30 ms here), which is where a test
// that races a write fails.
func python(t *testing.T) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the Python interop tests run on Unix")
	}
	py, err := pythonOnce()
	if err != nil {
		prereq.Skip(t, "python3", "python3 is not installed: Python interop not checked ("+err.Error()+")")
	}
	return py
}

var pythonOnce = sync.OnceValues(func() (string, error) {
	launcher, err := exec.LookPath("python3")
	if err != nil {
		return "", err
	}
	cmd, finish := toolCommand(toolTimeout, launcher, "-c", "import sys; print(sys.executable)")
	out, err := cmd.Output()
	err = finish(err)
	if py := strings.TrimSpace(string(out)); err == nil && filepath.IsAbs(py) {
		return py, nil
	}
	return launcher, nil // the launcher runs the scripts all the same, slower
})

// TestPythonFixtures_MatchTheScript: the committed Python fixtures are what
// testdata/make_python_fixtures.py writes.
func TestPythonFixtures_MatchTheScript(t *testing.T) {
	py := python(t)
	out := tempDir(t)
	b, err := runTool(toolTimeout, py, filepath.Join("testdata", "make_python_fixtures.py"), out)
	require.NoError(t, err, "%s", b)
	for _, name := range []string{"job.python.json", "status.python.json"} {
		assert.Equal(t, string(readFile(t, filepath.Join("testdata", name))), string(readFile(t, filepath.Join(out, name))), name)
	}
}

// pythonCheck loads each file named on the command line with json.load and
// parses every *_at value with datetime.fromisoformat; it prints, per file,
// the loaded object with each timestamp replaced by [microseconds since the
// epoch, UTC offset in seconds].
const pythonCheck = `
import json, sys
from datetime import datetime, timezone, timedelta
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
out = []
for path in sys.argv[1:]:
    with open(path, encoding="utf-8") as fh:
        obj = json.load(fh)
    for k, v in list(obj.items()):
        if k.endswith("_at"):
            dt = datetime.fromisoformat(v)
            obj[k] = [(dt - EPOCH) // timedelta(microseconds=1), dt.utcoffset().total_seconds()]
    out.append(obj)
json.dump(out, sys.stdout)
`

// TestPython_LoadsWhatWeWrite: Python's json.load reads our files and
// datetime.fromisoformat parses every timestamp, as UTC, to the microsecond.
func TestPython_LoadsWhatWeWrite(t *testing.T) {
	py := python(t)
	dir := newJobDir(t, "j1")
	require.NoError(t, jobstore.WriteSpec(dir, goldenSpec()))
	st := goldenStatus()
	require.NoError(t, jobstore.WriteStatus(dir, st))

	cmd, finish := toolCommand(toolTimeout, py, "-c", pythonCheck, dir.SpecPath(), dir.StatusPath())
	out, err := cmd.Output()
	require.NoError(t, finish(err))
	var got []map[string]any
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.UseNumber()
	require.NoError(t, dec.Decode(&got))
	require.Len(t, got, 2)

	stamp := func(tm time.Time) []any {
		return []any{json.Number(strconv.FormatInt(tm.UnixMicro(), 10)), json.Number("0.0")}
	}
	spec, status := got[0], got[1]
	assert.Equal(t, stamp(submitted), spec["submitted_at"])
	assert.Equal(t, "j1", spec["job_id"])
	assert.Equal(t, map[string]any{"team": "vfx", "équipe": "✓"}, spec["labels"])
	assert.Equal(t, map[string]any{"frames": []any{json.Number("1"), json.Number("2"), json.Number("3")},
		"scene": "café <night> & day", "scale": json.Number("0.5")}, spec["params"])
	assert.Equal(t, stamp(st.UpdatedAt), status["updated_at"])
	assert.Equal(t, stamp(*st.StartedAt), status["started_at"])
	assert.Equal(t, stamp(*st.FinishedAt), status["finished_at"])
	assert.Equal(t, st.Message, status["message"])
	assert.Equal(t, "failed", status["state"])
	assert.Equal(t, json.Number("42"), status["seq"])
	assert.Equal(t, json.Number("0.75"), status["progress"])
}
