package jobstore_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeSteps migrate a made-up record: version 1 called the progress "pct"
// (0..100), version 2 calls it "progress" (0..1), version 3 adds "labels".
// Each step records the schema_version it was handed.
func fakeSteps(seen *[]string) map[int]jobstore.MigrationForTest {
	return map[int]jobstore.MigrationForTest{
		1: func(m map[string]any) (map[string]any, error) {
			*seen = append(*seen, fmt.Sprint(m["schema_version"]))
			if pct, ok := m["pct"].(float64); ok {
				m["progress"] = pct / 100
				delete(m, "pct")
			}
			return m, nil
		},
		2: func(m map[string]any) (map[string]any, error) {
			*seen = append(*seen, fmt.Sprint(m["schema_version"]))
			m["labels"] = map[string]any{"migrated": "yes"}
			return m, nil
		},
	}
}

// deepCopy copies a decoded JSON value, to compare the caller's map after.
func deepCopy(t testing.TB, m map[string]any) map[string]any {
	t.Helper()
	if m == nil {
		return nil
	}
	b, err := json.Marshal(m)
	require.NoError(t, err)
	var out map[string]any
	require.NoError(t, json.Unmarshal(b, &out))
	return out
}

func TestMigrate_AppliesStepsInOrderOnACopy(t *testing.T) {
	tests := []struct {
		name    string
		payload map[string]any
		current int
		want    map[string]any
		seen    []string
	}{
		{"1 to 3", map[string]any{"schema_version": 1.0, "pct": 50.0},
			3, map[string]any{"schema_version": 3, "progress": 0.5, "labels": map[string]any{"migrated": "yes"}}, []string{"1", "2"}},
		{"2 to 3", map[string]any{"schema_version": 2.0, "progress": 0.25},
			3, map[string]any{"schema_version": 3, "progress": 0.25, "labels": map[string]any{"migrated": "yes"}}, []string{"2"}},
		{"1 to 2", map[string]any{"schema_version": json.Number("1"), "pct": 10.0},
			2, map[string]any{"schema_version": 2, "progress": 0.1}, []string{"1"}},
		{"equal", map[string]any{"schema_version": 3.0, "progress": 1.0},
			3, map[string]any{"schema_version": 3, "progress": 1.0}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var seen []string
			before := deepCopy(t, tt.payload)
			got, err := jobstore.MigrateForTest(tt.payload, tt.current, fakeSteps(&seen), "test.json")
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.seen, seen, "each step sees the version it migrates from")
			assert.Equal(t, before, deepCopy(t, tt.payload), "the caller's map is unchanged")

			got["scribble"] = true // the result is not the caller's map either
			assert.NotContains(t, tt.payload, "scribble")
		})
	}
}

// TestMigrate_StepsCannotChangeTheCallersNestedValues: a step that edits a
// nested object (renaming a label, say) must not reach into the caller's
// map through it.
func TestMigrate_StepsCannotChangeTheCallersNestedValues(t *testing.T) {
	payload := map[string]any{"schema_version": 1.0,
		"labels": map[string]any{"team": "vfx"}, "tags": []any{"a", map[string]any{"b": 1.0}}}
	before := deepCopy(t, payload)
	steps := map[int]jobstore.MigrationForTest{1: func(m map[string]any) (map[string]any, error) {
		labels := m["labels"].(map[string]any)
		labels["group"] = labels["team"]
		delete(labels, "team")
		tags := m["tags"].([]any)
		tags[0] = "changed"
		tags[1].(map[string]any)["b"] = 2.0
		return m, nil
	}}
	got, err := jobstore.MigrateForTest(payload, 2, steps, "test.json")
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"group": "vfx"}, got["labels"])
	assert.Equal(t, before, payload, "the caller's nested values are unchanged")
}

func TestMigrate_StampsEveryStepsVersion(t *testing.T) {
	var seen []string
	// Steps that forget (or garble) schema_version: Migrate stamps it.
	steps := map[int]jobstore.MigrationForTest{
		0: func(m map[string]any) (map[string]any, error) {
			seen = append(seen, fmt.Sprint(m["schema_version"]))
			delete(m, "schema_version")
			return m, nil
		},
		1: func(m map[string]any) (map[string]any, error) {
			seen = append(seen, fmt.Sprint(m["schema_version"]))
			return map[string]any{"schema_version": "garbled"}, nil
		},
		2: func(m map[string]any) (map[string]any, error) {
			seen = append(seen, fmt.Sprint(m["schema_version"]))
			return nil, nil // nothing kept
		},
	}
	got, err := jobstore.MigrateForTest(map[string]any{"x": 1.0}, 3, steps, "test.json")
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"schema_version": 3}, got)
	assert.Equal(t, []string{"<nil>", "1", "2"}, seen, "a missing schema_version is version 0")
}

func TestMigrate_MissingStepIsErrNoMigrationNamingTheVersion(t *testing.T) {
	var seen []string
	steps := fakeSteps(&seen)
	delete(steps, 2)
	tests := []struct {
		name    string
		payload map[string]any
		from    int
	}{
		{"gap at 2", map[string]any{"schema_version": 1.0, "pct": 5.0}, 2},
		{"no schema_version is 0", map[string]any{"pct": 5.0}, 0},
		{"schema_version null is 0", map[string]any{"schema_version": nil}, 0},
		{"nil map is version 0", nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := deepCopy(t, tt.payload)
			got, err := jobstore.MigrateForTest(tt.payload, 3, steps, "status.json")
			assert.Nil(t, got)
			assert.ErrorIs(t, err, jobstore.ErrNoMigration)
			e := errOf(t, err)
			assert.Equal(t, "schema_version", e.Subject)
			assert.Equal(t, tt.from, e.Found)
			assert.Equal(t, 3, e.Supported)
			assert.Contains(t, e.Error(), fmt.Sprintf("no migration from schema_version %d to %d", tt.from, tt.from+1))
			assert.Empty(t, e.Op, "the reader names what was done (read status), not the migration")
			assert.NotEmpty(t, e.Remedy)
			assert.Equal(t, before, deepCopy(t, tt.payload))
		})
	}
}

func TestMigrate_FailingStepIsErrNoMigrationWrappingTheCause(t *testing.T) {
	cause := errors.New("pct is not a number")
	steps := map[int]jobstore.MigrationForTest{
		1: func(m map[string]any) (map[string]any, error) { m["half-done"] = true; return m, nil },
		2: func(m map[string]any) (map[string]any, error) { m["broken"] = true; return nil, cause },
	}
	payload := map[string]any{"schema_version": 1.0}
	got, err := jobstore.MigrateForTest(payload, 3, steps, "status.json")
	assert.Nil(t, got)
	assert.ErrorIs(t, err, jobstore.ErrNoMigration)
	assert.ErrorIs(t, err, cause)
	e := errOf(t, err)
	assert.Equal(t, 2, e.Found)
	assert.Contains(t, e.Error(), "migration from schema_version 2 to 3 failed: pct is not a number")
	assert.Equal(t, map[string]any{"schema_version": 1.0}, payload)
}

func TestMigrate_NewerRecordIsErrNewerSchemaNamingBothVersions(t *testing.T) {
	for _, v := range []any{3.0, json.Number("3"), 3, int64(3)} {
		payload := map[string]any{"schema_version": v, "state": "running"}
		got, err := jobstore.MigrateForTest(payload, 1, nil, "status.json")
		assert.Nil(t, got)
		assert.ErrorIs(t, err, jobstore.ErrNewerSchema)
		e := errOf(t, err)
		assert.Equal(t, "written by a newer jobstore (schema_version 3); this version understands up to 1", e.Msg)
		assert.Equal(t, 3, e.Found)
		assert.Equal(t, 1, e.Supported)
		assert.Equal(t, "schema_version", e.Subject)
		assert.Contains(t, e.Remedy, "upgrade")
		assert.Equal(t, map[string]any{"schema_version": v, "state": "running"}, payload)
	}
}

func TestMigrate_NonIntegerVersionIsErrInvalidWithFound(t *testing.T) {
	tests := []struct {
		name string
		v    any
	}{
		{"string", "1"},
		{"empty string", ""},
		{"fraction", 1.5},
		{"tiny fraction", 1.0000001},
		{"huge", 1e300},
		{"beyond int32", float64(math.MaxInt32) + 1},
		{"negative", -1.0},
		{"negative zero point five", -0.5},
		{"infinity", math.Inf(1)},
		{"NaN", math.NaN()},
		{"bool", true},
		{"array", []any{1.0}},
		{"object", map[string]any{"v": 1.0}},
		{"json.Number fraction", json.Number("1.5")},
		{"json.Number exponent", json.Number("1e2")},
		{"json.Number huge", json.Number("99999999999999999999")},
		{"json.Number beyond int32", json.Number("2147483648")},
		{"json.Number negative", json.Number("-2")},
		{"int negative", -7},
		{"int64 huge", int64(math.MaxInt64)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			payload := map[string]any{"schema_version": tt.v}
			got, err := jobstore.MigrateForTest(payload, 1, nil, "job.json")
			assert.Nil(t, got)
			assert.ErrorIs(t, err, jobstore.ErrInvalid)
			assert.NotErrorIs(t, err, jobstore.ErrNewerSchema)
			e := errOf(t, err)
			assert.Equal(t, "schema_version", e.Subject)
			if f, ok := tt.v.(float64); ok && math.IsNaN(f) {
				assert.True(t, math.IsNaN(e.Found.(float64)))
			} else {
				assert.Equal(t, tt.v, e.Found)
			}
			assert.Equal(t, 1, e.Supported)
			assert.NotEmpty(t, e.Remedy)
		})
	}
}

func TestMigrate_LargestVersionIsAccepted(t *testing.T) {
	got, err := jobstore.MigrateForTest(map[string]any{"schema_version": float64(math.MaxInt32)}, math.MaxInt32, nil, "x")
	require.NoError(t, err)
	assert.Equal(t, math.MaxInt32, got["schema_version"])
}

// TestReads_MigrateOlderRecordsInMemoryOnly: with a migration step from
// version 0 in place, an old job.json and status.json read as current
// records, and the files stay exactly as they were (no write-back, no
// chmod, no litter). Without the step (the real maps are empty at version
// 1), the same files are ErrNoMigration.
func TestReads_MigrateOlderRecordsInMemoryOnly(t *testing.T) {
	dir := newJobDir(t, "old-job")
	require.NoError(t, os.MkdirAll(string(dir), 0o755))
	writeFile(t, dir.SpecPath(), readFile(t, filepath.Join("testdata", "job.v0.json")))
	writeFile(t, dir.StatusPath(), readFile(t, filepath.Join("testdata", "status.v0.json")))
	require.NoError(t, os.Chmod(dir.SpecPath(), 0o444))

	_, err := jobstore.ReadSpec(dir)
	assert.ErrorIs(t, err, jobstore.ErrNoMigration)
	assert.ErrorContains(t, err, "no migration from schema_version 0 to 1")
	_, err = jobstore.ReadStatus(dir)
	assert.ErrorIs(t, err, jobstore.ErrNoMigration)

	// Version 0 named the kind "type" and the state "status".
	rename := func(from, to string) jobstore.MigrationForTest {
		return func(m map[string]any) (map[string]any, error) {
			m[to] = m[from]
			delete(m, from)
			return m, nil
		}
	}
	before := snapshot(t, string(dir))

	spec, err := jobstore.ReadSpecWithStepsForTest(dir, map[int]jobstore.MigrationForTest{0: rename("type", "kind")})
	require.NoError(t, err)
	assert.Equal(t, jobstore.JobSchemaVersion, spec.SchemaVersion)
	assert.Equal(t, "render", spec.Kind)
	st, err := jobstore.ReadStatusWithStepsForTest(dir, map[int]jobstore.MigrationForTest{0: rename("status", "state")})
	require.NoError(t, err)
	assert.Equal(t, jobstore.StatusSchemaVersion, st.SchemaVersion)
	assert.Equal(t, jobstore.Succeeded, st.State)

	assert.Equal(t, before, snapshot(t, string(dir)), "the older files are not rewritten")
}

func TestSchemaVersionOf_AppliesMigratesRule(t *testing.T) {
	for _, tc := range []struct {
		raw      string
		want     int
		wantKind error
	}{
		{`{"schema_version": 1, "state": "running"}`, 1, nil},
		{`{"schema_version": 7}`, 7, nil},
		{`{}`, 0, nil},
		{`{"schema_version": null}`, 0, nil},
		{`{"schema_version": "1"}`, 0, jobstore.ErrInvalid},
		{`{"schema_version": 1.5}`, 0, jobstore.ErrInvalid},
		{`{"schema_version": -1}`, 0, jobstore.ErrInvalid},
		{`{"schema_version": 99999999999}`, 0, jobstore.ErrInvalid},
		{`[]`, 0, jobstore.ErrInvalid},
		{`{"schema_version": 1`, 0, jobstore.ErrCorrupt},
		{`{}{}`, 0, jobstore.ErrCorrupt},
	} {
		t.Run(tc.raw, func(t *testing.T) {
			got, err := jobstore.SchemaVersionOf([]byte(tc.raw))
			if tc.wantKind != nil {
				assert.ErrorIs(t, err, tc.wantKind)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}
