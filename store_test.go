package jobstore_test

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteSpec_StampsVersionAndTimeAndCreatesMissingDirectories(t *testing.T) {
	root := tempDir(t)
	dir := jobstore.JobDir(filepath.Join(root, "not", "yet", "job-1"))
	before := time.Now().Add(-time.Second)

	err := jobstore.WriteSpec(dir, jobstore.JobSpec{SchemaVersion: 99, ID: "job-1", Kind: "render"})
	require.NoError(t, err)

	spec, err := jobstore.ReadSpec(dir)
	require.NoError(t, err)
	assert.Equal(t, jobstore.JobSchemaVersion, spec.SchemaVersion, "the caller's version is replaced by the one written")
	assert.Equal(t, "job-1", spec.ID)
	assert.Equal(t, "render", spec.Kind)
	assert.Equal(t, time.UTC, spec.SubmittedAt.Location())
	assert.WithinRange(t, spec.SubmittedAt, before, time.Now().Add(time.Second))
	assert.Equal(t, spec.SubmittedAt, spec.SubmittedAt.Truncate(time.Microsecond))
	assert.Equal(t, []string{"job.json", "job.lock"}, names(t, string(dir)), "the job and its free lock, nothing else")
}

func TestWriteSpec_KeepsGivenFieldsAndNormalisesTime(t *testing.T) {
	dir := newJobDir(t, "job-2")
	ist := time.FixedZone("IST", 5*3600+1800)
	given := time.Date(2026, 11, 30, 15, 5, 40, 123456789, ist)
	in := jobstore.JobSpec{ID: "job-2", Kind: "render", Params: json.RawMessage(`{"frames": [1, 2], "out": "<a&b>"}`),
		SubmittedAt: given, SubmittedBy: "ana@host", Labels: map[string]string{"team": "vfx", "ünï": "cödé"}}
	require.NoError(t, jobstore.WriteSpec(dir, in))

	assert.Contains(t, string(readFile(t, dir.SpecPath())), `"schema_version": 1,`, "a spec without retries or schedule is written as version 1")
	got, err := jobstore.ReadSpec(dir)
	require.NoError(t, err)
	assert.Equal(t, jobstore.JobSpec{SchemaVersion: jobstore.JobSchemaVersion, ID: "job-2", Kind: "render",
		Params:      json.RawMessage(`{"frames":[1,2],"out":"<a&b>"}`),
		SubmittedAt: time.Date(2026, 11, 30, 9, 35, 40, 123456000, time.UTC), SubmittedBy: "ana@host",
		Labels: map[string]string{"team": "vfx", "ünï": "cödé"}}, got)
}

func TestWriteSpec_RefusesInvalidSpecBeforeTouchingAnything(t *testing.T) {
	tests := []struct {
		name    string
		spec    jobstore.JobSpec
		subject string
		found   any
	}{
		{"empty ID", jobstore.JobSpec{Kind: "k"}, "job_id", ""},
		{"ID with a slash", jobstore.JobSpec{ID: "a/b", Kind: "k"}, "job_id", "a/b"},
		{"ID not the directory name", jobstore.JobSpec{ID: "other", Kind: "k"}, "job_id", "other"},
		{"empty kind", jobstore.JobSpec{ID: "job-3", Kind: ""}, "kind", ""},
		{"params not JSON", jobstore.JobSpec{ID: "job-3", Kind: "k", Params: json.RawMessage(`{"a":`)}, "params", `{"a":`},
		{"year 10000", jobstore.JobSpec{ID: "job-3", Kind: "k", SubmittedAt: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}, "submitted_at", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := newJobDir(t, "job-3")
			err := jobstore.WriteSpec(dir, tt.spec)
			assert.ErrorIs(t, err, jobstore.ErrInvalid)
			e := errOf(t, err)
			assert.Equal(t, tt.subject, e.Subject)
			if tt.found != nil {
				assert.Equal(t, tt.found, e.Found)
			} else {
				assert.NotNil(t, e.Found)
			}
			assert.Equal(t, dir.SpecPath(), e.Path)
			assert.NoDirExists(t, string(dir), "nothing is created for an invalid spec")
		})
	}
}

func TestWriteSpec_SecondWriteGetsErrExistsAndChangesNothing(t *testing.T) {
	dir := newJob(t, "job-4")
	before := fileSnapshot(t, string(dir))

	err := jobstore.WriteSpec(dir, jobstore.JobSpec{ID: "job-4", Kind: "other", SubmittedBy: "intruder"})
	assert.ErrorIs(t, err, jobstore.ErrExists)
	assert.ErrorIs(t, err, fs.ErrExist)
	e := errOf(t, err)
	assert.Equal(t, dir.SpecPath(), e.Path)
	assert.NotEmpty(t, e.Remedy)
	assert.Equal(t, before, fileSnapshot(t, string(dir)), "the loser changes nothing")
}

func TestReadSpec_MissingJobIsErrNotJob(t *testing.T) {
	root := tempDir(t)
	empty := jobstore.JobDir(filepath.Join(root, "empty"))
	require.NoError(t, os.Mkdir(string(empty), 0o755))
	for name, dir := range map[string]jobstore.JobDir{
		"directory missing":    jobstore.JobDir(filepath.Join(root, "missing")),
		"directory without it": empty,
	} {
		t.Run(name, func(t *testing.T) {
			spec, err := jobstore.ReadSpec(dir)
			assert.ErrorIs(t, err, jobstore.ErrNotJob)
			assert.ErrorIs(t, err, fs.ErrNotExist)
			assert.Zero(t, spec)
			e := errOf(t, err)
			assert.Contains(t, e.Remedy, "check the path")
			assert.Equal(t, string(dir), e.Path)
		})
	}
}

func TestWriteStatus_StampsVersionJobIDAndUpdatedAt(t *testing.T) {
	dir := newJob(t, "job-5")
	before := time.Now().Add(-time.Second)
	require.NoError(t, jobstore.WriteStatus(dir, jobstore.JobStatus{SchemaVersion: 7, State: jobstore.Queued}))

	st, err := jobstore.ReadStatus(dir)
	require.NoError(t, err)
	require.NotNil(t, st)
	assert.Equal(t, jobstore.StatusSchemaVersion, st.SchemaVersion)
	assert.Equal(t, "job-5", st.JobID, "an empty job_id is the directory's name")
	assert.Equal(t, jobstore.Queued, st.State)
	assert.Equal(t, time.UTC, st.UpdatedAt.Location())
	assert.WithinRange(t, st.UpdatedAt, before, time.Now().Add(time.Second))

	given := submitted.Add(time.Hour)
	require.NoError(t, jobstore.WriteStatus(dir, jobstore.JobStatus{State: jobstore.Running, UpdatedAt: given}))
	st, err = jobstore.ReadStatus(dir)
	require.NoError(t, err)
	assert.Equal(t, given, st.UpdatedAt, "a given updated_at is kept")
}

func TestWriteStatus_RoundTripsEveryField(t *testing.T) {
	dir := newJob(t, "job-6")
	started, finished := submitted.Add(time.Second), submitted.Add(time.Minute)
	in := jobstore.JobStatus{JobID: "job-6", State: jobstore.Failed, Seq: math.MaxUint64, Progress: ptr(0.25),
		Message: "frame 3/12 <ok> & \"quoted\" ✓", UpdatedAt: finished, StartedAt: &started, FinishedAt: &finished,
		PID: 4242, Host: "node-7", ExitCode: ptr(-1), Error: "out of memory", Remedy: "give it more memory"}
	require.NoError(t, jobstore.WriteStatus(dir, in))
	got, err := jobstore.ReadStatus(dir)
	require.NoError(t, err)
	in.SchemaVersion = jobstore.StatusSchemaVersion
	assert.Equal(t, &in, got)
}

func TestWriteStatus_AcceptsProgressBounds(t *testing.T) {
	dir := newJob(t, "job-7")
	for _, p := range []*float64{nil, ptr(0.0), ptr(math.Copysign(0, -1)), ptr(0.5), ptr(1.0)} {
		require.NoError(t, jobstore.WriteStatus(dir, jobstore.JobStatus{State: jobstore.Running, Progress: p}))
		st, err := jobstore.ReadStatus(dir)
		require.NoError(t, err)
		assert.Equal(t, p, st.Progress)
	}
}

func TestWriteStatus_RefusesInvalidStatusAndKeepsOldOneByteIdentical(t *testing.T) {
	tests := []struct {
		name    string
		st      jobstore.JobStatus
		subject string
		found   any
	}{
		{"empty state", jobstore.JobStatus{}, "state", ""},
		{"unknown state", jobstore.JobStatus{State: "done"}, "state", "done"},
		{"state in capitals", jobstore.JobStatus{State: "Running"}, "state", "Running"},
		{"progress NaN", jobstore.JobStatus{State: jobstore.Running, Progress: ptr(math.NaN())}, "progress", math.NaN()},
		{"progress below 0", jobstore.JobStatus{State: jobstore.Running, Progress: ptr(-0.1)}, "progress", -0.1},
		{"progress above 1", jobstore.JobStatus{State: jobstore.Running, Progress: ptr(1.1)}, "progress", 1.1},
		{"progress infinite", jobstore.JobStatus{State: jobstore.Running, Progress: ptr(math.Inf(1))}, "progress", math.Inf(1)},
		{"job_id invalid", jobstore.JobStatus{State: jobstore.Running, JobID: "../x"}, "job_id", "../x"},
		{"updated_at year 10000", jobstore.JobStatus{State: jobstore.Running, UpdatedAt: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}, "updated_at", nil},
		{"started_at year 0", jobstore.JobStatus{State: jobstore.Running, StartedAt: ptr(time.Date(0, 12, 31, 0, 0, 0, 0, time.UTC))}, "started_at", nil},
		{"finished_at year 10000", jobstore.JobStatus{State: jobstore.Running, FinishedAt: ptr(time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC))}, "finished_at", nil},
	}
	dir := newJob(t, "job-8")
	require.NoError(t, jobstore.WriteStatus(dir, jobstore.JobStatus{State: jobstore.Running, Seq: 1, Message: "the old one"}))
	before := fileSnapshot(t, string(dir))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := jobstore.WriteStatus(dir, tt.st)
			assert.ErrorIs(t, err, jobstore.ErrInvalid)
			e := errOf(t, err)
			assert.Equal(t, tt.subject, e.Subject)
			assert.Equal(t, dir.StatusPath(), e.Path)
			switch f := tt.found.(type) {
			case nil:
				assert.NotNil(t, e.Found)
			case float64:
				if math.IsNaN(f) {
					assert.True(t, math.IsNaN(e.Found.(float64)), "found %v", e.Found)
				} else {
					assert.Equal(t, f, e.Found)
				}
			default:
				assert.Equal(t, f, e.Found)
			}
			assert.NotEmpty(t, e.Remedy)
			assert.Equal(t, before, fileSnapshot(t, string(dir)), "the old status stays byte-identical, no temp file")
		})
	}
}

func TestWriteStatus_MissingDirectoryIsErrNotJob(t *testing.T) {
	dir := newJobDir(t, "job-9")
	err := jobstore.WriteStatus(dir, jobstore.JobStatus{State: jobstore.Running})
	assert.ErrorIs(t, err, jobstore.ErrNotJob)
	assert.ErrorIs(t, err, fs.ErrNotExist)
	assert.NoDirExists(t, string(dir), "WriteStatus never creates a job directory")
}

// TestWriteStatus_DirectoryWithoutJobJSONIsErrNotJob: the first write into
// a directory that is not a job (no job.json: /tmp, a root, a job being
// removed by hand) is refused, and nothing is created there.
func TestWriteStatus_DirectoryWithoutJobJSONIsErrNotJob(t *testing.T) {
	for _, opts := range [][]jobstore.WriteOption{nil, {jobstore.NoSync()}} {
		t.Run(fmt.Sprintf("%d options", len(opts)), func(t *testing.T) {
			root := tempDir(t)
			dir := jobstore.JobDir(filepath.Join(root, "not-a-job"))
			require.NoError(t, os.Mkdir(string(dir), 0o755))
			writeFile(t, filepath.Join(string(dir), "data.txt"), []byte("someone's file\n"))
			before := fileSnapshot(t, string(dir))

			err := jobstore.WriteStatus(dir, jobstore.JobStatus{State: jobstore.Running}, opts...)
			require.ErrorIs(t, err, jobstore.ErrNotJob)
			assert.ErrorIs(t, err, fs.ErrNotExist)
			assert.Equal(t, string(dir), errOf(t, err).Path)
			assert.Equal(t, before, fileSnapshot(t, string(dir)), "nothing created: no status.json, no temp file")
		})
	}
}

func TestReadStatus_NilNilWhileNothingHasRun(t *testing.T) {
	dir := newJob(t, "job-10")
	st, err := jobstore.ReadStatus(dir)
	assert.NoError(t, err)
	assert.Nil(t, st)
}

func TestReadStatus_NotAJobIsErrNotJob(t *testing.T) {
	root := tempDir(t)
	statusOnly := jobstore.JobDir(filepath.Join(root, "status-only"))
	require.NoError(t, os.Mkdir(string(statusOnly), 0o755))
	st := statusIn(jobstore.Running, 1) // by hand: WriteStatus refuses a directory without job.json
	st.SchemaVersion = jobstore.StatusSchemaVersion
	writeRecord(t, statusOnly.StatusPath(), st)
	empty := jobstore.JobDir(filepath.Join(root, "empty"))
	require.NoError(t, os.Mkdir(string(empty), 0o755))

	for name, dir := range map[string]jobstore.JobDir{
		"directory missing":            jobstore.JobDir(filepath.Join(root, "missing")),
		"directory without job.json":   empty,
		"status.json without job.json": statusOnly,
		"the root, which is no job":    jobstore.JobDir(root),
	} {
		t.Run(name, func(t *testing.T) {
			st, err := jobstore.ReadStatus(dir)
			assert.Nil(t, st)
			assert.ErrorIs(t, err, jobstore.ErrNotJob)
			assert.ErrorIs(t, err, fs.ErrNotExist)
			assert.Contains(t, errOf(t, err).Remedy, "check the path")
		})
	}
}

// TestReads_NeverWriteAnything compares the whole job directory (names,
// bytes, modes, mtimes) before and after every kind of read, successful or
// not. A read must not migrate the file on disk, chmod it or leave litter.
func TestReads_NeverWriteAnything(t *testing.T) {
	dir := newJob(t, "job-11")
	reads := map[string]func(){
		"ReadSpec":         func() { _, _ = jobstore.ReadSpec(dir) },
		"ReadStatus":       func() { _, _ = jobstore.ReadStatus(dir) },
		"ReadJSONTolerant": func() { var v any; _, _ = jobstore.ReadJSONTolerant(dir.StatusPath(), &v) },
	}
	states := []struct {
		name   string
		status []byte // nil: no status.json
	}{
		{"no status yet", nil},
		{"current status", []byte(`{"schema_version": 1, "job_id": "job-11", "state": "running", "seq": 1, "updated_at": "2026-11-30T09:35:40.123456+00:00"}`)},
		{"older status", []byte(`{"job_id": "job-11", "state": "running", "seq": 1, "updated_at": "2026-11-30T09:35:40+00:00"}`)},
		{"newer status", []byte(`{"schema_version": 3, "job_id": "job-11", "state": "running", "seq": 1, "updated_at": "2026-11-30T09:35:40+00:00"}`)},
		{"torn status", []byte(`{"schema_version": 1, "job_id": "job`)},
	}
	for _, s := range states {
		_ = os.Remove(dir.StatusPath())
		if s.status != nil {
			writeFile(t, dir.StatusPath(), s.status)
		}
		// Let mtimes move on, so that a rewrite of the same bytes would show.
		old := submitted.Add(-24 * time.Hour)
		require.NoError(t, os.Chtimes(dir.SpecPath(), old, old))
		if s.status != nil {
			require.NoError(t, os.Chtimes(dir.StatusPath(), old, old))
		}
		before := snapshot(t, string(dir))
		for name, read := range reads {
			read()
			assert.Equal(t, before, snapshot(t, string(dir)), "%s with %s changed the directory", name, s.name)
		}
	}
}
