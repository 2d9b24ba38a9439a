package jobstore

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// UseMigrationsForTest replaces the migration steps of job.json and
// status.json (nil keeps one as it is) until the test ends, so that the
// external tests can read an older record through ReadSpec and ReadStatus.
// The maps are package state: a test that calls it must not run in
// parallel.
func UseMigrationsForTest(t testing.TB, spec, status map[int]Migration) {
	t.Helper()
	oldSpec, oldStatus := specMigrations, statusMigrations
	if spec != nil {
		specMigrations = spec
	}
	if status != nil {
		statusMigrations = status
	}
	t.Cleanup(func() { specMigrations, statusMigrations = oldSpec, oldStatus })
}

func TestMigrationMaps_AreEmptyAtVersion1(t *testing.T) {
	// Version 2 of a record is a step added to these maps; at version 1
	// there is nothing to migrate from, and a v0 record is ErrNoMigration.
	assert.Equal(t, 1, JobSchemaVersion)
	assert.Equal(t, 1, StatusSchemaVersion)
	assert.Empty(t, specMigrations)
	assert.Empty(t, statusMigrations)
}

// statusSteps pretend status.json is at version 3: version 1 kept progress
// as "pct" (0..100) and the state in capitals, version 2 had no host.
var statusSteps = map[int]Migration{
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
	migrated, err := decodeRecord(v1, 3, statusSteps, StatusFile, &st)
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
	steps := map[int]Migration{2: func(m map[string]any) (map[string]any, error) { called = true; return m, nil }}
	var st JobStatus
	migrated, err := decodeRecord([]byte(`{"schema_version": 3, "state": "queued", "seq": 1, "updated_at": "2026-11-30T09:35:40Z"}`), 3, steps, StatusFile, &st)
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
		steps   map[int]Migration
		is      error
		subject string
	}{
		{"newer, with fields of the wrong type", `{"schema_version": 4, "seq": "not a number"}`, statusSteps, ErrNewerSchema, "schema_version"},
		{"missing step", `{"schema_version": 1, "state": "queued"}`, map[int]Migration{2: statusSteps[2]}, ErrNoMigration, "schema_version"},
		{"no version is 0", `{"state": "queued"}`, statusSteps, ErrNoMigration, "schema_version"},
		{"step fails", `{"schema_version": 2}`, map[int]Migration{2: func(map[string]any) (map[string]any, error) { return nil, broken }}, broken, "schema_version"},
		{"version is a string", `{"schema_version": "2"}`, statusSteps, ErrInvalid, "schema_version"},
		{"migrated record has a bad field", `{"schema_version": 1, "pct": "half"}`, statusSteps, ErrInvalid, "progress"},
		{"not an object", `[1, 2, 3]`, statusSteps, ErrInvalid, StatusFile},
		{"null", `null`, statusSteps, ErrInvalid, StatusFile},
		{"torn", `{"schema_version": 1, "st`, statusSteps, ErrCorrupt, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var st JobStatus
			_, err := decodeRecord([]byte(tt.data), 3, tt.steps, StatusFile, &st)
			assert.ErrorIs(t, err, tt.is)
			var e *Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, tt.subject, e.Subject)
		})
	}
}
