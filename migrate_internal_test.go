package jobstore

import (
	"bytes"
	"errors"
	"maps"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/axqua/jobstore/internal/testdir"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The external tests reach the version rule through these: they take the
// steps as an argument, so no test changes the package's own schemas.

// MigrationForTest is a migration step.
type MigrationForTest = migrationStep

// MigrateForTest is migrate for a record named what at version current.
func MigrateForTest(payload map[string]any, current int, steps map[int]MigrationForTest, what string) (map[string]any, error) {
	return migrate(payload, recordSchema{file: what, current: current, steps: steps})
}

// ReadSpecWithStepsForTest is ReadSpec with steps added to job.json's
// migrations.
func ReadSpecWithStepsForTest(dir JobDir, steps map[int]MigrationForTest) (JobSpec, error) {
	sch := specSchema()
	maps.Copy(sch.steps, steps)
	return readSpec(dir, newReadOptions(nil), sch)
}

// ReadStatusWithStepsForTest is ReadStatus with steps added to
// status.json's migrations.
func ReadStatusWithStepsForTest(dir JobDir, steps map[int]MigrationForTest) (*JobStatus, error) {
	sch := statusSchema()
	maps.Copy(sch.steps, steps)
	return readStatusWith(dir, sch)
}

// readStatusWith is ReadStatus without the check that job.json exists, for
// a given schema.
func readStatusWith(dir JobDir, sch recordSchema) (*JobStatus, error) {
	d, err := openJobDir("read status", dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return readStatusIn(d, newReadOptions(nil), sch)
}

func TestSchemas_StepsAreWhatEachVersionAdded(t *testing.T) {
	// job.json and status.json: version 2 added optional fields only, so
	// version 1 is read directly and its step changes nothing; index.json
	// is at version 1 with no step. A v0 record is ErrNoMigration.
	for _, sch := range []recordSchema{specSchema(), statusSchema()} {
		assert.Equal(t, 2, sch.current, sch.file)
		assert.Equal(t, baseSchemaVersion, sch.direct, sch.file)
		require.Len(t, sch.steps, 1, sch.file)
		m := map[string]any{"schema_version": 1, "kind": "k"}
		out, err := sch.steps[1](maps.Clone(m))
		require.NoError(t, err)
		assert.Equal(t, m, out, "%s: version 1 to 2 changes no field", sch.file)
	}
	assert.Equal(t, 1, indexSchema().current)
	assert.Empty(t, indexSchema().steps)
}

// TestStatusNextVersion_IsOneStepAndTheVersion: a version of status.json
// that changes what a field means is a new current version in model.go
// and a step in migrate.go, and nothing the readers do. A throwaway version
// 3, whose step marks the message, reads the version-1 golden file as
// version 3 (through both steps), through the file reader and the decoder,
// and leaves the file as it was; a version-3 record takes no step; version
// 4 is newer.
func TestStatusNextVersion_IsOneStepAndTheVersion(t *testing.T) {
	next := statusSchema()
	next.current, next.direct = StatusSchemaVersion+1, 0
	calls := 0
	next.steps[StatusSchemaVersion] = func(m map[string]any) (map[string]any, error) {
		calls++
		m["message"] = m["message"].(string) + " (next)"
		return m, nil
	}
	golden, err := os.ReadFile(filepath.Join("testdata", "status.golden.json"))
	require.NoError(t, err)
	v1, migrated, err := DecodeStatus(golden)
	require.NoError(t, err)
	require.False(t, migrated, "the golden file is read directly")
	want := *v1
	want.SchemaVersion, want.Message = next.current, v1.Message+" (next)"

	dir := JobDir(filepath.Join(testdir.New(t), "j1"))
	require.NoError(t, os.MkdirAll(string(dir), 0o755))
	require.NoError(t, os.WriteFile(dir.StatusPath(), golden, 0o644))
	st, err := readStatusWith(dir, next)
	require.NoError(t, err)
	assert.Equal(t, want, *st, "read from the file")
	after, err := os.ReadFile(dir.StatusPath())
	require.NoError(t, err)
	assert.Equal(t, golden, after, "a reader never rewrites the file")

	st, migrated, err = decodeStatus(golden, next)
	require.NoError(t, err)
	assert.True(t, migrated)
	assert.Equal(t, want, *st, "decoded from bytes")
	assert.Equal(t, 2, calls)

	// What a next-version writer writes: this package's marshaller stamps
	// its own version, so the version is set in the bytes.
	asNow := *st
	asNow.SchemaVersion = 0
	written, err := marshalRecord(asNow)
	require.NoError(t, err)
	written = bytes.Replace(written, []byte(`"schema_version": 1`), []byte(`"schema_version": 3`), 1)
	st, migrated, err = decodeStatus(written, next)
	require.NoError(t, err)
	assert.False(t, migrated, "a version-3 record is current")
	assert.Equal(t, want, *st)
	assert.Equal(t, 2, calls, "and takes no step")

	_, _, err = DecodeStatus(written)
	assert.ErrorIs(t, err, ErrNewerSchema, "this version refuses what the next one wrote")
	v4 := bytes.Replace(written, []byte(`"schema_version": 3`), []byte(`"schema_version": 4`), 1)
	_, _, err = decodeStatus(v4, next)
	var e *Error
	require.ErrorAs(t, err, &e)
	assert.ErrorIs(t, err, ErrNewerSchema)
	assert.Equal(t, 4, e.Found)
	assert.Equal(t, 3, e.Supported)
}

// statusSteps pretend status.json is at version 3: version 1 kept progress
// as "pct" (0..100) and the state in capitals, version 2 had no host.
var statusSteps = map[int]migrationStep{
	1: func(m map[string]any) (map[string]any, error) {
		if pct, ok := m["pct"]; ok {
			m["progress"] = pct
			delete(m, "pct")
		}
		if s, ok := m["state"].(string); ok && s == "RUNNING" {
			m["state"] = "running"
		}
		return m, nil
	},
	2: func(m map[string]any) (map[string]any, error) {
		m["host"] = "migrated"
		return m, nil
	},
}

func TestDecodeRecord_MigratesThroughEveryStepThenDecodes(t *testing.T) {
	v1 := []byte(`{"schema_version": 1, "job_id": "j1", "state": "RUNNING", "seq": 18446744073709551615,
		"pct": 0.5, "updated_at": "2026-11-30T09:35:40.123456+00:00", "unknown": [1, 2]}`)
	var st JobStatus
	migrated, err := decodeRecord(v1, recordSchema{file: StatusFile, current: 3, steps: statusSteps}, &st)
	require.NoError(t, err)
	assert.True(t, migrated)
	assert.Equal(t, 3, st.SchemaVersion)
	assert.Equal(t, Running, st.State)
	assert.Equal(t, uint64(math.MaxUint64), st.Seq, "big integers stay exact through the map")
	require.NotNil(t, st.Progress)
	assert.Equal(t, 0.5, *st.Progress)
	assert.Equal(t, "migrated", st.Host)
	assert.Equal(t, "j1", st.JobID)
}

func TestDecodeRecord_CurrentRecordTakesNoStep(t *testing.T) {
	called := false
	steps := map[int]migrationStep{2: func(m map[string]any) (map[string]any, error) { called = true; return m, nil }}
	var st JobStatus
	migrated, err := decodeRecord([]byte(`{"schema_version": 3, "state": "queued", "seq": 1, "updated_at": "2026-11-30T09:35:40Z"}`), recordSchema{file: StatusFile, current: 3, steps: steps}, &st)
	require.NoError(t, err)
	assert.False(t, migrated)
	assert.False(t, called)
	assert.Equal(t, Queued, st.State)
}

func TestDecodeRecord_ErrorsOfTheVersionRuleComeFirst(t *testing.T) {
	broken := errors.New("cannot migrate")
	tests := []struct {
		name    string
		data    string
		steps   map[int]migrationStep
		is      error
		subject string
	}{
		{"newer, with fields of the wrong type", `{"schema_version": 4, "seq": "not a number"}`, statusSteps, ErrNewerSchema, "schema_version"},
		{"missing step", `{"schema_version": 1, "state": "queued"}`, map[int]migrationStep{2: statusSteps[2]}, ErrNoMigration, "schema_version"},
		{"no version is 0", `{"state": "queued"}`, statusSteps, ErrNoMigration, "schema_version"},
		{"step fails", `{"schema_version": 2}`, map[int]migrationStep{2: func(map[string]any) (map[string]any, error) { return nil, broken }}, broken, "schema_version"},
		{"version is a string", `{"schema_version": "2"}`, statusSteps, ErrInvalid, "schema_version"},
		{"migrated record has a bad field", `{"schema_version": 1, "pct": "half"}`, statusSteps, ErrInvalid, "progress"},
		{"not an object", `[1, 2, 3]`, statusSteps, ErrInvalid, StatusFile},
		{"null", `null`, statusSteps, ErrInvalid, StatusFile},
		{"torn", `{"schema_version": 1, "st`, statusSteps, ErrCorrupt, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var st JobStatus
			_, err := decodeRecord([]byte(tt.data), recordSchema{file: StatusFile, current: 3, steps: tt.steps}, &st)
			assert.ErrorIs(t, err, tt.is)
			var e *Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, tt.subject, e.Subject)
		})
	}
}
