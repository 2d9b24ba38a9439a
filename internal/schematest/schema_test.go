package schematest_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/internal/prereq"
)

// repo is the root of the repository, seen from this module's directory.
const repo = "../.."

// The four records and their schemas.
const (
	specRecord   = "job"
	statusRecord = "status"
	indexRecord  = "index"
	cancelRecord = "cancel"
)

func schemaPath(record string) string {
	return filepath.Join(repo, "docs", "schema", record+".schema.json")
}

// compile compiles docs/schema/<record>.schema.json as draft 2020-12, with
// the validator's metaschema check.
func compile(t *testing.T, record string) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open(schemaPath(record))
	require.NoError(t, err)
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	require.NoError(t, err)
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	url := "file:///" + record + ".schema.json"
	require.NoError(t, c.AddResource(url, doc))
	s, err := c.Compile(url)
	require.NoError(t, err, "%s does not compile", schemaPath(record))
	return s
}

// schemas compiles all four, once per test.
func schemas(t *testing.T) map[string]*jsonschema.Schema {
	t.Helper()
	return map[string]*jsonschema.Schema{
		specRecord: compile(t, specRecord), statusRecord: compile(t, statusRecord), indexRecord: compile(t, indexRecord),
		cancelRecord: compile(t, cancelRecord),
	}
}

// validate reports the schema's verdict on data, which must be JSON.
func validate(t *testing.T, s *jsonschema.Schema, data []byte) error {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	require.NoError(t, err, "not JSON: %q", data)
	return s.Validate(inst)
}

// decode reports jobstore's verdict on a record.
func decode(record string, data []byte) error {
	switch record {
	case specRecord:
		_, _, err := jobstore.DecodeSpec(data)
		return err
	case statusRecord:
		_, _, err := jobstore.DecodeStatus(data)
		return err
	case cancelRecord:
		_, _, err := jobstore.DecodeCancel(data)
		return err
	}
	panic("no decoder for " + record)
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

// TestSchemas_AcceptTheGoldenAndPythonFixtures: the bytes jobstore writes
// (pinned by the root module's golden tests) and the files Python's
// json.dump writes are valid.
func TestSchemas_AcceptTheGoldenAndPythonFixtures(t *testing.T) {
	s := schemas(t)
	for _, tt := range []struct{ file, record string }{
		{"job.golden.json", specRecord},
		{"job.python.json", specRecord},
		{"status.golden.json", statusRecord},
		{"status.minimal.golden.json", statusRecord},
		{"status.python.json", statusRecord},
	} {
		t.Run(tt.file, func(t *testing.T) {
			data := readFile(t, filepath.Join(repo, "testdata", tt.file))
			require.NoError(t, decode(tt.record, data), "jobstore reads it")
			assert.NoError(t, validate(t, s[tt.record], data))
		})
	}
}

// TestSchemas_AcceptWhatALifecycleWrites: every record a job's life writes
// (submit, start, progress, finish; a runner that died, marked lost; a job
// with no status yet) and the index of that root are valid.
func TestSchemas_AcceptWhatALifecycleWrites(t *testing.T) {
	s := schemas(t)
	root := filepath.Join(t.TempDir(), "jobs")
	var dirs []jobstore.JobDir

	dir, err := jobstore.Submit(root, jobstore.JobSpec{Kind: "render", Params: json.RawMessage(`[1, "two", null]`),
		SubmittedBy: "ana", Labels: map[string]string{"team": "vfx"}})
	require.NoError(t, err)
	run, err := jobstore.Start(dir)
	require.NoError(t, err)
	require.NoError(t, run.Progress(0, "starting"))
	require.NoError(t, run.Progress(1, "all frames"))
	require.NoError(t, run.Finish(jobstore.Outcome{State: jobstore.Failed, ExitCode: new(int), Error: "boom", Remedy: "retry"}))
	require.NoError(t, run.Close())
	dirs = append(dirs, dir)

	lost, err := jobstore.Submit(root, jobstore.JobSpec{ID: "_lost.1", Kind: "render"})
	require.NoError(t, err)
	run, err = jobstore.Start(lost)
	require.NoError(t, err)
	require.NoError(t, run.Close())
	changed, err := jobstore.Reconcile(lost)
	require.NoError(t, err)
	require.True(t, changed)
	dirs = append(dirs, lost)

	queued, err := jobstore.Submit(root, jobstore.JobSpec{ID: "queued", Kind: "k"})
	require.NoError(t, err)
	dirs = append(dirs, queued)

	fresh := jobstore.JobDir(filepath.Join(root, "no-status-yet"))
	require.NoError(t, jobstore.WriteSpec(fresh, jobstore.JobSpec{ID: fresh.ID(), Kind: "k"}))

	require.NoError(t, os.Mkdir(filepath.Join(root, "not a job"), 0o755)) // an unreadable entry in the index

	// Cancel requests, as RequestCancel writes them: one with every field
	// (the queued job is cancelled by it), one with the fields it stamps.
	require.NoError(t, jobstore.RequestCancel(queued, jobstore.CancelRequest{RequestedBy: "ana (GUI)", Reason: "wrong <input> & file"}))
	cancelled, err := jobstore.Submit(root, jobstore.JobSpec{ID: "cancelled-bare", Kind: "k"})
	require.NoError(t, err)
	require.NoError(t, jobstore.RequestCancel(cancelled, jobstore.CancelRequest{}))
	dirs = append(dirs, cancelled)
	for _, d := range []jobstore.JobDir{queued, cancelled} {
		assert.NoError(t, validate(t, s[cancelRecord], readFile(t, d.CancelPath())), d.CancelPath())
		st, err := jobstore.ReadStatus(d)
		require.NoError(t, err)
		require.Equal(t, jobstore.Cancelled, st.State, "RequestCancel cancels a queued job: its status is checked below")
	}

	for _, d := range append(dirs, fresh) {
		assert.NoError(t, validate(t, s[specRecord], readFile(t, d.SpecPath())), d.SpecPath())
	}
	for _, d := range dirs {
		assert.NoError(t, validate(t, s[statusRecord], readFile(t, d.StatusPath())), d.StatusPath())
	}

	idx, err := jobstore.RebuildIndex(root)
	require.NoError(t, err)
	require.Len(t, idx.Jobs, 5)
	require.Len(t, idx.Unreadable, 1, "the index must show an unreadable entry for this test to cover it")
	assert.NoError(t, validate(t, s[indexRecord], readFile(t, filepath.Join(root, jobstore.IndexFile))))
}

// TestSchemas_RefuseTheOutdatedAndNewerFixtures: a record without
// schema_version, or from a newer jobstore, is not a version-1 record.
func TestSchemas_RefuseTheOutdatedAndNewerFixtures(t *testing.T) {
	s := schemas(t)
	for _, tt := range []struct{ file, record string }{
		{"job.v0.json", specRecord},
		{"status.v0.json", statusRecord},
		{"status.newer.json", statusRecord},
	} {
		t.Run(tt.file, func(t *testing.T) {
			data := readFile(t, filepath.Join(repo, "testdata", tt.file))
			require.Error(t, decode(tt.record, data), "jobstore refuses it")
			assert.Error(t, validate(t, s[tt.record], data))
		})
	}
}

// TestSchemas_BrokenJobsFailWhereASchemaCanSaySo walks the broken jobs that
// `jobstore check` is tested on. A file that is not JSON is for the reader to
// refuse; every other one gets the same verdict from the schema as from
// jobstore's decoder, and exactly the listed ones are refused.
func TestSchemas_BrokenJobsFailWhereASchemaCanSaySo(t *testing.T) {
	s := schemas(t)
	refused := map[string]bool{
		"spec-newer/job.json":             true,
		"spec-v0/job.json":                true,
		"spec-no-kind/job.json":           true,
		"status-newer/status.json":        true,
		"status-v0/status.json":           true,
		"status-bad-progress/status.json": true,
		"cancel-newer/cancel.json":        true,
	}
	// status-wrong-id/status.json and cancel-wrong-id/cancel.json are valid
	// on their own: that job_id must equal the directory's name is beyond a
	// schema, and jobstore check reports it.
	broken := filepath.Join(repo, "cmd", "jobstore", "testdata", "broken")
	files, err := filepath.Glob(filepath.Join(broken, "*", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	seen := map[string]bool{}
	for _, path := range files {
		rel := filepath.ToSlash(strings.TrimPrefix(path, broken+string(filepath.Separator)))
		record := specRecord
		switch filepath.Base(path) {
		case jobstore.StatusFile:
			record = statusRecord
		case jobstore.CancelFile:
			record = cancelRecord
		}
		data := readFile(t, path)
		if !json.Valid(data) {
			assert.False(t, refused[rel], "%s is not JSON: no schema verdict expected", rel)
			continue
		}
		seen[rel] = true
		serr := validate(t, s[record], data)
		assert.Equal(t, refused[rel], serr != nil, "%s: schema says %v", rel, serr)
		assert.Equal(t, decode(record, data) != nil, serr != nil, "%s: schema and decoder disagree (schema: %v)", rel, serr)
	}
	for rel := range refused {
		assert.True(t, seen[rel], "%s is missing from %s", rel, broken)
	}
}

// verdictCase is one record that the schema and jobstore's decoder must
// judge alike.
type verdictCase struct {
	name   string
	record string
	json   string
	valid  bool
}

const goodSpec = `"schema_version": 1, "job_id": "j1", "kind": "render", "submitted_at": "2026-11-30T09:35:40.123456+00:00"`
const goodStatus = `"schema_version": 1, "job_id": "j1", "state": "running", "seq": 7, "updated_at": "2026-11-30T09:35:40.123456+00:00"`
const goodCancel = `"schema_version": 1, "job_id": "j1", "requested_at": "2026-11-30T09:41:02.503117+00:00"`

func spec(fields string) string   { return "{" + goodSpec + fields + "}" }
func status(fields string) string { return "{" + goodStatus + fields + "}" }
func cancel(fields string) string { return "{" + goodCancel + fields + "}" }

// withSpec and withStatus replace one field of the good record.
func withSpec(field, value string) string   { return replaceField(goodSpec, field, value) }
func withStatus(field, value string) string { return replaceField(goodStatus, field, value) }
func withCancel(field, value string) string { return replaceField(goodCancel, field, value) }

func replaceField(fields, field, value string) string {
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte("{"+fields+"}"), &m); err != nil {
		panic(err)
	}
	if value == "" {
		delete(m, field)
	} else {
		m[field] = json.RawMessage(value)
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return string(b)
}

var verdictCases = []verdictCase{
	{"good spec", specRecord, spec(""), true},
	{"spec with every optional field", specRecord, spec(`, "params": {"a": [1]}, "submitted_by": "ana", "labels": {"k": "v"}`), true},
	{"spec with a field no version knows", specRecord, spec(`, "phase": 2`), true},
	{"ID starting with an underscore", specRecord, withSpec("job_id", `"_a.b-c"`), true},
	{"ID of 128 characters", specRecord, withSpec("job_id", `"`+strings.Repeat("a", 128)+`"`), true},
	{"ID of 129 characters", specRecord, withSpec("job_id", `"`+strings.Repeat("a", 129)+`"`), false},
	{"ID starting with a dot", specRecord, withSpec("job_id", `".hidden"`), false},
	{"ID starting with a dash", specRecord, withSpec("job_id", `"-rf"`), false},
	{"ID with a slash", specRecord, withSpec("job_id", `"a/b"`), false},
	{"ID with a space", specRecord, withSpec("job_id", `"a b"`), false},
	{"empty ID", specRecord, withSpec("job_id", `""`), false},
	{"no ID", specRecord, withSpec("job_id", ""), false},
	{"empty kind", specRecord, withSpec("kind", `""`), false},
	{"kind not a string", specRecord, withSpec("kind", `7`), false},
	{"label not a string", specRecord, spec(`, "labels": {"k": 1}`), false},
	{"spec schema_version 2", specRecord, withSpec("schema_version", `2`), true},
	{"spec schema_version 3", specRecord, withSpec("schema_version", `3`), false},
	{"spec with retries and schedule", specRecord, strings.TrimSuffix(replaceField(goodSpec, "schema_version", "2"), "}") + `, "max_attempts": 5, "backoff_ms": 1000, "max_backoff_ms": 60000, "not_before": "2026-12-01T02:00:00+00:00", "priority": -3, "timeout_ms": 3600000}`, true},
	{"negative max_attempts", specRecord, spec(`, "max_attempts": -1`), false},
	{"negative backoff_ms", specRecord, spec(`, "backoff_ms": -1`), false},
	{"timeout_ms not a number", specRecord, spec(`, "timeout_ms": "1h"`), false},
	{"not_before not a timestamp", specRecord, spec(`, "not_before": "tomorrow"`), false},
	{"spec schema_version 0", specRecord, withSpec("schema_version", `0`), false},
	{"spec schema_version a string", specRecord, withSpec("schema_version", `"1"`), false},
	{"spec without schema_version", specRecord, withSpec("schema_version", ""), false},

	{"good status", statusRecord, status(""), true},
	{"status schema_version 2", statusRecord, withStatus("schema_version", `2`), true},
	{"status schema_version 3", statusRecord, withStatus("schema_version", `3`), false},
	{"pending retry", statusRecord, `{"schema_version": 2, "job_id": "j1", "state": "queued", "seq": 7, "updated_at": "2026-11-30T09:35:40.123456+00:00", "retry_at": "2026-11-30T09:36:00+00:00", "attempts": [{"attempt": 1, "state": "failed", "started_at": "2026-11-30T09:35:00+00:00", "ended_at": "2026-11-30T09:35:40+00:00", "host": "h", "exit_code": 2, "error": "e"}, {"attempt": 2, "state": "lost", "interrupted": true, "ended_at": "2026-11-30T09:35:40+00:00"}]}`, true},
	{"retry_at in a running record", statusRecord, status(`, "retry_at": "2026-11-30T09:36:00+00:00"`), false},
	{"attempt that is still running", statusRecord, status(`, "attempts": [{"attempt": 1, "state": "running", "ended_at": "2026-11-30T09:35:40+00:00"}]`), false},
	{"attempt without ended_at", statusRecord, status(`, "attempts": [{"attempt": 1, "state": "failed"}]`), false},
	{"status with every optional field", statusRecord, status(`, "progress": 0.5, "message": "m", "started_at": "2026-11-30T09:35:40+00:00", "finished_at": "2026-11-30T09:35:41Z", "pid": 12, "host": "h", "attempt": 3, "exit_code": -1, "error": "e", "remedy": "r"`), true},
	{"every state", statusRecord, withStatus("state", `"lost"`), true},
	{"unknown state", statusRecord, withStatus("state", `"bogus"`), false},
	{"state not a string", statusRecord, withStatus("state", `1`), false},
	{"progress 0", statusRecord, status(`, "progress": 0`), true},
	{"progress 1", statusRecord, status(`, "progress": 1`), true},
	{"progress 1.5", statusRecord, status(`, "progress": 1.5`), false},
	{"progress below 0", statusRecord, status(`, "progress": -0.1`), false},
	{"progress a string", statusRecord, status(`, "progress": "50%"`), false},
	{"seq 0", statusRecord, withStatus("seq", `0`), true},
	{"largest seq", statusRecord, withStatus("seq", `18446744073709551615`), true},
	{"seq beyond 2^64-1", statusRecord, withStatus("seq", `18446744073709551616`), false},
	{"negative seq", statusRecord, withStatus("seq", `-1`), false},
	{"pid a string", statusRecord, status(`, "pid": "12"`), false},
	{"exit code a fraction", statusRecord, status(`, "exit_code": 1.5`), false},
	{"status schema_version 3", statusRecord, withStatus("schema_version", `3`), false},
	{"ID with a backslash", statusRecord, withStatus("job_id", `"a\\b"`), false},
	{"ID ending with a dot", specRecord, withSpec("job_id", `"job."`), false},
	{"ID of one dot-free character", specRecord, withSpec("job_id", `"a"`), true},
	{"ID with dots inside", specRecord, withSpec("job_id", `"a.b.c"`), true},
	{"ID ending with a dash", specRecord, withSpec("job_id", `"job-"`), true},
	{"ID ending with a newline", specRecord, withSpec("job_id", `"job\n"`), false},
	{"ID of 128 characters ending with a dot", specRecord, withSpec("job_id", `"`+strings.Repeat("a", 127)+`."`), false},
	{"device name CON", specRecord, withSpec("job_id", `"CON"`), false},
	{"device name in lower case", specRecord, withSpec("job_id", `"nul"`), false},
	{"device name in mixed case with an extension", statusRecord, withStatus("job_id", `"aUx.txt"`), false},
	{"device name with two extensions", specRecord, withSpec("job_id", `"prn.tar.gz"`), false},
	{"COM0", specRecord, withSpec("job_id", `"COM0"`), false},
	{"LPT9 with an extension", specRecord, withSpec("job_id", `"LPT9.log"`), false},
	{"COM without a digit", specRecord, withSpec("job_id", `"COM"`), true},
	{"COM10", specRecord, withSpec("job_id", `"COM10"`), true},
	{"device name as a prefix", specRecord, withSpec("job_id", `"console"`), true},
	{"device name after a prefix", specRecord, withSpec("job_id", `"my-aux"`), true},
	{"device name with a dash", specRecord, withSpec("job_id", `"aux-1"`), true},
	{"index.json", specRecord, withSpec("job_id", `"index.json"`), false},
	{"INDEX.JSON", statusRecord, withStatus("job_id", `"INDEX.JSON"`), false},
	{"index.json with more after it", specRecord, withSpec("job_id", `"index.json1"`), true},
	{"index", specRecord, withSpec("job_id", `"index"`), true},

	// Timestamps: the forms jobstore writes and reads, and what it refuses.
	{"Z offset", statusRecord, withStatus("updated_at", `"2026-11-30T09:35:40Z"`), true},
	{"other offset", statusRecord, withStatus("updated_at", `"2026-11-30T15:05:40.5-05:30"`), true},
	{"space instead of T", statusRecord, withStatus("updated_at", `"2026-11-30 09:35:40.123456+00:00"`), true},
	{"no offset (UTC)", statusRecord, withStatus("updated_at", `"2026-11-30T09:35:40.000005"`), true},
	{"nine fractional digits", statusRecord, withStatus("updated_at", `"2026-11-30T09:35:40.123456789Z"`), true},
	{"year 1", statusRecord, withStatus("updated_at", `"0001-01-01T00:00:00+00:00"`), true},
	{"year 9999", statusRecord, withStatus("updated_at", `"9999-12-31T23:59:59.999999+00:00"`), true},
	{"year 0", statusRecord, withStatus("updated_at", `"0000-06-01T00:00:00+00:00"`), false},
	{"not a time", statusRecord, withStatus("updated_at", `"yesterday"`), false},
	{"a date only", statusRecord, withStatus("updated_at", `"2026-11-30"`), false},
	{"month 13", statusRecord, withStatus("updated_at", `"2026-13-01T00:00:00Z"`), false},
	{"hour 24", statusRecord, withStatus("updated_at", `"2026-11-30T24:00:00Z"`), false},
	{"non-ASCII digits", statusRecord, withStatus("updated_at", `"2\u0660\u0662\u0666-11-30T09:35:40Z"`), false},
	{"lowercase z", statusRecord, withStatus("updated_at", `"2026-11-30T09:35:40z"`), false},
	{"a Unix time", statusRecord, withStatus("updated_at", `1764495340`), false},
	{"spec timestamp with a slash", specRecord, withSpec("submitted_at", `"2026/11/30 09:35:40"`), false},

	// cancel.json.
	{"good cancel", cancelRecord, cancel(""), true},
	{"cancel with every optional field", cancelRecord, cancel(`, "requested_by": "alice (render GUI)", "reason": "wrong input file"`), true},
	{"cancel with a field no version knows", cancelRecord, cancel(`, "priority": 2`), true},
	{"cancel with empty optional fields", cancelRecord, cancel(`, "requested_by": "", "reason": ""`), true},
	{"cancel requested_at with Z", cancelRecord, withCancel("requested_at", `"2026-11-30T09:41:02Z"`), true},
	{"cancel without requested_at", cancelRecord, withCancel("requested_at", ""), false},
	{"cancel requested_at not a time", cancelRecord, withCancel("requested_at", `"now"`), false},
	{"cancel requested_at in year 0", cancelRecord, withCancel("requested_at", `"0000-01-01T00:00:00Z"`), false},
	{"cancel without job_id", cancelRecord, withCancel("job_id", ""), false},
	{"cancel job_id a device name", cancelRecord, withCancel("job_id", `"lpt1"`), false},
	{"cancel job_id ending with a dot", cancelRecord, withCancel("job_id", `"j1."`), false},
	{"cancel requested_by not a string", cancelRecord, cancel(`, "requested_by": 7`), false},
	{"cancel reason not a string", cancelRecord, cancel(`, "reason": ["a"]`), false},
	{"cancel schema_version 2", cancelRecord, withCancel("schema_version", `2`), false},
	{"cancel schema_version 0", cancelRecord, withCancel("schema_version", `0`), false},
	{"cancel without schema_version", cancelRecord, withCancel("schema_version", ""), false},
	{"cancel schema_version 1.5", cancelRecord, withCancel("schema_version", `1.5`), false},
	{"cancel not an object", cancelRecord, `["cancel"]`, false},
}

// TestSchemas_JudgeLikeTheDecoder: each case gets the expected verdict from
// the schema, and the same one from DecodeSpec, DecodeStatus or
// DecodeCancel.
func TestSchemas_JudgeLikeTheDecoder(t *testing.T) {
	s := schemas(t)
	for _, tt := range verdictCases {
		t.Run(tt.name, func(t *testing.T) {
			derr := decode(tt.record, []byte(tt.json))
			require.Equal(t, tt.valid, derr == nil, "jobstore's verdict: %v", derr)
			serr := validate(t, s[tt.record], []byte(tt.json))
			assert.Equal(t, tt.valid, serr == nil, "schema's verdict: %v", serr)
		})
	}
}

// TestSchemas_SharedDefinitionsAreIdentical: each schema file is
// self-contained (a Python user loads one file), so the definitions they
// share are copies, and must stay equal.
func TestSchemas_SharedDefinitionsAreIdentical(t *testing.T) {
	defs := map[string]map[string]json.RawMessage{}
	for _, record := range []string{specRecord, statusRecord, indexRecord, cancelRecord} {
		var doc struct {
			Defs map[string]json.RawMessage `json:"$defs"`
		}
		require.NoError(t, json.Unmarshal(readFile(t, schemaPath(record)), &doc))
		defs[record] = doc.Defs
	}
	for _, shared := range []struct{ def, a, b string }{
		{"timestamp", specRecord, statusRecord},
		{"timestamp", specRecord, indexRecord},
		{"jobId", specRecord, statusRecord},
		{"jobId", specRecord, indexRecord},
		{"timestamp", specRecord, cancelRecord},
		{"jobId", specRecord, cancelRecord},
		{"state", statusRecord, indexRecord},
	} {
		require.Contains(t, defs[shared.a], shared.def)
		require.Contains(t, defs[shared.b], shared.def)
		assert.JSONEq(t, string(defs[shared.a][shared.def]), string(defs[shared.b][shared.def]),
			"$defs/%s differs between %s and %s", shared.def, shared.a, shared.b)
	}
}

// pythonValidate reads [[schema file, record], ...] as JSON on stdin and
// prints a JSON list of verdicts (true: valid) from Python's jsonschema.
const pythonValidate = `
import json, sys
from jsonschema import Draft202012Validator
validators, out = {}, []
for schema_file, record in json.load(sys.stdin):
    if schema_file not in validators:
        with open(schema_file, encoding="utf-8") as fh:
            schema = json.load(fh)
        Draft202012Validator.check_schema(schema)
        validators[schema_file] = Draft202012Validator(schema)
    out.append(validators[schema_file].is_valid(record))
json.dump(out, sys.stdout)
`

// pythonWriter writes jobs with python/jobstore.py under the root argv[1]:
// a job with every field, a minimal one (an ID from new_job_id), each with
// a cancel request (with and without its optional fields).
const pythonWriter = `
import sys, jobstore
root = sys.argv[1]
full = jobstore.submit(root, "render", {"frames": [1, 2, 3], "scene": "caf\u00e9 <night> & day", "scale": 0.5, "none": None},
                       job_id="py-full", labels={"team": "vfx", "\u00e9quipe": "\u2713"}, submitted_by="ana@qgis", create=True)
minimal = jobstore.submit(root, "k")
jobstore.request_cancel(full, by="alice (render GUI)", reason="wrong input file")
jobstore.request_cancel(minimal)
print(full)
print(minimal)
`

// pythonWritten runs pythonWriter and returns the records it wrote, each
// with the record kind of its schema, named by job and file.
func pythonWritten(t *testing.T, py string) []input {
	t.Helper()
	root := filepath.Join(t.TempDir(), "jobs")
	module, err := filepath.Abs(filepath.Join(repo, "python"))
	require.NoError(t, err)
	cmd := exec.Command(py, "-c", pythonWriter, root)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+module, "PYTHONDONTWRITEBYTECODE=1")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	require.NoError(t, err)
	dirs := strings.Fields(string(out))
	require.Len(t, dirs, 2, "%s", out)
	var records []input
	for _, dir := range dirs {
		for file, record := range map[string]string{"job.json": specRecord, "status.json": statusRecord, "cancel.json": cancelRecord} {
			records = append(records, input{filepath.Base(dir) + "/" + file, record, readFile(t, filepath.Join(dir, file))})
		}
	}
	return records
}

// input is a record to judge: its name in messages, its kind, its bytes.
type input struct {
	name, record string
	data         []byte
}

// python3 returns the python3 interpreter, or skips the test.
func python3(t *testing.T) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the Python interop tests run on Unix")
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		prereq.Skip(t, "python3", "python3 is not installed: Python's jsonschema not checked")
	}
	return py
}

// TestSchemas_AcceptWhatPythonWrites: the records python/jobstore.py
// writes (submit, request_cancel) are valid, and jobstore reads them.
func TestSchemas_AcceptWhatPythonWrites(t *testing.T) {
	s := schemas(t)
	for _, in := range pythonWritten(t, python3(t)) {
		t.Run(in.name, func(t *testing.T) {
			require.NoError(t, decode(in.record, in.data), "jobstore reads it")
			assert.NoError(t, validate(t, s[in.record], in.data))
		})
	}
}

// TestSchemas_PythonJSONSchemaAgrees: Python's jsonschema package, as a
// Python tool would use it, gives every case and fixture the verdict the Go
// validator gives (regular expressions differ between the two languages),
// and so do the records python/jobstore.py writes.
func TestSchemas_PythonJSONSchemaAgrees(t *testing.T) {
	py := python3(t)
	if out, err := exec.Command(py, "-c", "import jsonschema").CombinedOutput(); err != nil {
		prereq.Skip(t, "python3-jsonschema", "Python's jsonschema is not installed (pip install jsonschema, or apt-get install python3-jsonschema): "+
			strings.TrimSpace(string(out)))
	}
	s := schemas(t)
	inputs := pythonWritten(t, py)
	for _, c := range verdictCases {
		inputs = append(inputs, input{c.name, c.record, []byte(c.json)})
	}
	for _, f := range []struct{ file, record string }{
		{"job.golden.json", specRecord}, {"job.python.json", specRecord}, {"job.v0.json", specRecord},
		{"status.golden.json", statusRecord}, {"status.python.json", statusRecord}, {"status.newer.json", statusRecord},
	} {
		inputs = append(inputs, input{f.file, f.record, readFile(t, filepath.Join(repo, "testdata", f.file))})
	}
	var req [][2]any
	for _, in := range inputs {
		req = append(req, [2]any{schemaPath(in.record), json.RawMessage(in.data)})
	}
	stdin, err := json.Marshal(req)
	require.NoError(t, err)
	cmd := exec.Command(py, "-c", pythonValidate)
	cmd.Stdin = bytes.NewReader(stdin)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	require.NoError(t, err)
	var verdicts []bool
	require.NoError(t, json.Unmarshal(out, &verdicts))
	require.Len(t, verdicts, len(inputs))
	for i, in := range inputs {
		goValid := validate(t, s[in.record], in.data) == nil
		assert.Equal(t, goValid, verdicts[i], "%s: Go says valid=%v, Python's jsonschema says %v", in.name, goValid, verdicts[i])
	}
}
