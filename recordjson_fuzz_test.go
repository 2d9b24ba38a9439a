package jobstore_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The fuzz targets drive the pure decoding path (DecodeStatus, DecodeSpec,
// the migration): no file is touched, so each run is fast. Their properties:
//
//   - no input panics;
//   - every error is an *Error whose Sentinel is one of the package's sentinels;
//   - whatever is accepted re-encodes (as WriteStatus/WriteSpec write it,
//     and with json.Marshal) and decodes again to a deeply equal value, and
//     encoding that value again gives the same bytes.
//
// Seeds: testdata/fuzz/<target>/, made from the testdata files by
// TestFuzzCorpus_MatchesTestdata -update. Run one for 20 s with
//
//	go test -run '^$' -fuzz '^FuzzDecodeStatus$' -fuzztime 20s

// recordBytes encodes a record exactly as WriteStatus and WriteSpec do.
func recordBytes(t testing.TB, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	require.NoError(t, enc.Encode(v))
	return buf.Bytes()
}

// requireTyped fails unless err is an *Error of one of the sentinels' kinds.
func requireTyped(t testing.TB, err error, kinds ...error) {
	t.Helper()
	var e *jobstore.Error
	require.True(t, errors.As(err, &e), "not a *jobstore.Error: %T %v", err, err)
	if len(kinds) == 0 {
		for _, s := range sentinels {
			kinds = append(kinds, s)
		}
	}
	for _, k := range kinds {
		if e.Sentinel == k {
			require.NotPanics(t, func() { _ = err.Error() })
			return
		}
	}
	t.Fatalf("error of unexpected kind %v: %v", e.Sentinel, err)
}

func FuzzDecodeStatus(f *testing.F) {
	f.Add([]byte(`{"schema_version":1,"state":"lost","seq":18446744073709551615,"progress":-0,"updated_at":"0001-01-01T00:00:00Z"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, _, err := jobstore.DecodeStatus(data)
		if err != nil {
			require.Nil(t, st)
			requireTyped(t, err)
			return
		}
		require.NotNil(t, st)
		b := recordBytes(t, st)
		again, _, err := jobstore.DecodeStatus(b)
		require.NoError(t, err, "%s", b)
		require.Equal(t, st, again)
		require.Equal(t, string(b), string(recordBytes(t, again)))

		m, err := json.Marshal(st)
		require.NoError(t, err)
		again, _, err = jobstore.DecodeStatus(m)
		require.NoError(t, err, "%s", m)
		require.Equal(t, st, again)
	})
}

func FuzzDecodeSpec(f *testing.F) {
	f.Add([]byte(`{"schema_version":1,"job_id":"a","kind":"k","params":null,"labels":{},"submitted_at":"2026-11-30 09:35:40"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		spec, _, err := jobstore.DecodeSpec(data)
		if err != nil {
			require.Zero(t, spec)
			requireTyped(t, err)
			return
		}
		b := recordBytes(t, spec)
		again, _, err := jobstore.DecodeSpec(b)
		require.NoError(t, err, "%s", b)
		require.Equal(t, spec, again)
		require.Equal(t, string(b), string(recordBytes(t, again)))

		// json.Marshal escapes <, > and & everywhere, params included, which
		// stay escaped in the raw params: equal as JSON, not byte for byte.
		m, err := json.Marshal(spec)
		require.NoError(t, err)
		again, _, err = jobstore.DecodeSpec(m)
		require.NoError(t, err, "%s", m)
		if len(spec.Params) > 0 {
			require.JSONEq(t, string(spec.Params), string(again.Params))
		}
		again.Params = spec.Params
		require.Equal(t, spec, again)
	})
}

// fuzzSteps migrate a made-up record from version 0 to 8, with a gap at 5
// and a step that fails on request; some steps edit nested values, to show
// that the caller's map is never reached.
var fuzzSteps = map[int]jobstore.MigrationForTest{
	0: func(m map[string]any) (map[string]any, error) {
		if v, ok := m["type"]; ok {
			m["kind"] = v
			delete(m, "type")
		}
		return m, nil
	},
	1: func(m map[string]any) (map[string]any, error) {
		if l, ok := m["labels"].(map[string]any); ok {
			for k, v := range l {
				l[strings.ToUpper(k)] = v
				delete(l, k)
			}
		}
		return m, nil
	},
	2: func(m map[string]any) (map[string]any, error) {
		if a, ok := m["list"].([]any); ok && len(a) > 0 {
			a[0] = "edited"
		}
		return map[string]any{"wrapped": m}, nil
	},
	3: func(m map[string]any) (map[string]any, error) {
		if _, ok := m["fail"]; ok {
			return nil, errors.New("asked to fail")
		}
		return m, nil
	},
	4: func(m map[string]any) (map[string]any, error) { return m, nil },
	// no step 5
	6: func(m map[string]any) (map[string]any, error) { return nil, nil },
	7: func(m map[string]any) (map[string]any, error) { m["seven"] = 7.0; return m, nil },
}

// cloneValue copies a decoded JSON value, keeping its Go types.
func cloneValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if x == nil {
			return x
		}
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = cloneValue(e)
		}
		return m
	case []any:
		if x == nil {
			return x
		}
		s := make([]any, len(x))
		for i, e := range x {
			s[i] = cloneValue(e)
		}
		return s
	}
	return v
}

func decodeMap(data []byte, useNumber bool) (map[string]any, error) {
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	if useNumber {
		dec.UseNumber()
	}
	err := dec.Decode(&m)
	return m, err
}

func FuzzMigrate(f *testing.F) {
	f.Add([]byte(`{"schema_version":2,"list":[1],"labels":{"a":"b"},"fail":true}`), uint8(8), true)
	f.Fuzz(func(t *testing.T, data []byte, current uint8, useNumber bool) {
		payload, err := decodeMap(data, useNumber)
		if err != nil {
			return
		}
		cur := int(current % 10)
		before := cloneValue(payload)
		out, err := jobstore.MigrateForTest(payload, cur, fuzzSteps, "fuzz.json")
		require.True(t, reflect.DeepEqual(before, payload), "the caller's map changed")
		if err != nil {
			require.Nil(t, out)
			requireTyped(t, err, jobstore.ErrInvalid, jobstore.ErrNewerSchema, jobstore.ErrNoMigration)
			return
		}
		require.Equal(t, cur, out["schema_version"])

		b, err := json.Marshal(out)
		require.NoError(t, err)
		back, err := decodeMap(b, useNumber)
		require.NoError(t, err)
		again, err := jobstore.MigrateForTest(back, cur, fuzzSteps, "fuzz.json")
		require.NoError(t, err, "%s", b)
		b2, err := json.Marshal(again)
		require.NoError(t, err)
		require.Equal(t, string(b), string(b2), "a migrated record is current: Migrate leaves it as it is")
	})
}

// TestRecordBytes_AreWhatTheWritersWrite: the fuzz targets re-encode with
// recordBytes; it must be the writers' encoding.
func TestRecordBytes_AreWhatTheWritersWrite(t *testing.T) {
	for _, name := range []string{"status.golden.json", "status.minimal.golden.json"} {
		golden := readFile(t, filepath.Join("testdata", name))
		st, _, err := jobstore.DecodeStatus(golden)
		require.NoError(t, err)
		assert.Equal(t, string(golden), string(recordBytes(t, st)), name)
	}
	golden := readFile(t, filepath.Join("testdata", "job.golden.json"))
	spec, _, err := jobstore.DecodeSpec(golden)
	require.NoError(t, err)
	assert.Equal(t, string(golden), string(recordBytes(t, spec)))
}

// fuzzSeeds lists, per target, the corpus entries made from testdata: a
// file name and the values of one fuzz call.
func fuzzSeeds(t testing.TB) map[string]map[string][]any {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	require.NoError(t, err)
	seeds := map[string]map[string][]any{"FuzzDecodeStatus": {}, "FuzzDecodeSpec": {}, "FuzzMigrate": {}}
	for _, file := range files {
		data := readFile(t, file)
		name := "testdata-" + strings.TrimSuffix(filepath.Base(file), ".json")
		if !strings.HasPrefix(filepath.Base(file), "job.") {
			seeds["FuzzDecodeStatus"][name] = []any{data}
		}
		if !strings.HasPrefix(filepath.Base(file), "status.") || bytes.Contains(data, []byte("{")) {
			seeds["FuzzDecodeSpec"][name] = []any{data}
		}
		if json.Valid(data) {
			seeds["FuzzMigrate"][name+"-v1"] = []any{data, uint8(1), false}
			seeds["FuzzMigrate"][name+"-v8-numbers"] = []any{data, uint8(8), true}
		}
	}
	return seeds
}

// corpusFile is Go's fuzz corpus file format for one call.
func corpusFile(values []any) []byte {
	var b strings.Builder
	b.WriteString("go test fuzz v1\n")
	for _, v := range values {
		switch x := v.(type) {
		case []byte:
			fmt.Fprintf(&b, "[]byte(%q)\n", x)
		default:
			fmt.Fprintf(&b, "%T(%v)\n", x, x)
		}
	}
	return []byte(b.String())
}

// TestFuzzCorpus_MatchesTestdata: the seed corpus holds every testdata file
// as it is now (go test -run TestFuzzCorpus -update rewrites it). Inputs the
// fuzzer found and saved beside the seeds are left alone.
func TestFuzzCorpus_MatchesTestdata(t *testing.T) {
	for target, entries := range fuzzSeeds(t) {
		dir := filepath.Join("testdata", "fuzz", target)
		if *update {
			require.NoError(t, os.MkdirAll(dir, 0o755))
		}
		var names []string
		for name := range entries {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			path := filepath.Join(dir, name)
			want := corpusFile(entries[name])
			if *update {
				require.NoError(t, os.WriteFile(path, want, 0o644))
				continue
			}
			got, err := os.ReadFile(path)
			require.NoError(t, err, "missing seed; run go test -run TestFuzzCorpus -update")
			assert.Equal(t, string(want), string(got), "%s is stale; run go test -run TestFuzzCorpus -update", path)
		}
	}
}
