package jobstore

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"strconv"
)

// Migration turns a record of schema version n into one of version n+1. It
// receives a map it may change and return (a deep copy of the caller's).
// Migrate stamps the new schema_version itself.
type Migration func(map[string]any) (map[string]any, error)

// maxSchemaVersion bounds what counts as a schema version at all: a value
// beyond it is garbage, not a record from the future.
const maxSchemaVersion = math.MaxInt32

// Migrate brings payload, a record decoded into a map, to version current.
//
// The record's version is its "schema_version" (a JSON integer; missing
// means 0). Equal: a copy is returned unchanged. Older: steps[n] is applied
// for n = version, version+1, ..., current-1, each on a copy, each result
// stamped with n+1; a missing step is ErrNoMigration naming the version.
// Newer: ErrNewerSchema, naming both versions, with Found and Supported set.
// A schema_version that is not a non-negative integer (a string, 1.5, a
// number beyond 2^31-1) is ErrInvalid with Found set. The caller's map, and
// every map and slice in it, is never changed. what names the record in
// errors ("job.json", "status.json").
func Migrate(payload map[string]any, current int, steps map[int]Migration, what string) (map[string]any, error) {
	op := "migrate " + what
	v, err := schemaVersion(payload)
	if err != nil {
		return nil, errInvalid(op, "", "schema_version", payload["schema_version"], current, err.Error(),
			fmt.Sprintf("set schema_version to an integer; this jobstore writes %d", current))
	}
	if v > current {
		return nil, errNewerSchema(op, v, current)
	}
	out := cloneJSON(payload).(map[string]any) // deep: a step may edit nested values
	for ; v < current; v++ {
		step := steps[v]
		if step == nil {
			return nil, errNoMigration(op, v, current, nil)
		}
		next, err := step(out)
		if err != nil {
			return nil, errNoMigration(op, v, current, err)
		}
		if next == nil {
			next = map[string]any{}
		}
		out = maps.Clone(next)
		out["schema_version"] = v + 1
	}
	out["schema_version"] = current
	return out, nil
}

// cloneJSON copies a decoded JSON value, maps and slices all the way down.
func cloneJSON(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = cloneJSON(e)
		}
		return m
	case []any:
		s := make([]any, len(x))
		for i, e := range x {
			s[i] = cloneJSON(e)
		}
		return s
	}
	return v
}

// SchemaVersionOf returns the schema_version written in a record's bytes,
// by the rule Migrate applies (missing or null means 0), without decoding
// the rest: for tools that report which version a file holds. Bytes that are
// not one JSON value are ErrCorrupt; a JSON value that is not an object, or
// a schema_version that is not a non-negative integer, is ErrInvalid.
func SchemaVersionOf(record []byte) (int, error) {
	var head struct {
		SchemaVersion json.RawMessage `json:"schema_version"`
	}
	if err := jsonDecode(record, &head); err != nil {
		return 0, err
	}
	m := map[string]any{}
	if len(head.SchemaVersion) > 0 {
		m["schema_version"] = json.Number(head.SchemaVersion)
		if string(head.SchemaVersion) == "null" {
			m["schema_version"] = nil
		}
	}
	v, err := schemaVersion(m)
	if err != nil {
		return 0, errInvalid("read schema_version", "", "schema_version", string(head.SchemaVersion), nil, err.Error(),
			"set schema_version to a non-negative integer")
	}
	return v, nil
}

// schemaVersion reads "schema_version" from a map decoded with or without
// json.Decoder.UseNumber.
func schemaVersion(m map[string]any) (int, error) {
	raw, ok := m["schema_version"]
	if !ok || raw == nil {
		return 0, nil
	}
	var n int64
	switch x := raw.(type) {
	case json.Number:
		i, err := strconv.ParseInt(string(x), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s is not an integer", x)
		}
		n = i
	case float64:
		if x != math.Trunc(x) || math.IsInf(x, 0) {
			return 0, fmt.Errorf("%v is not an integer", x)
		}
		if math.Abs(x) > maxSchemaVersion {
			return 0, fmt.Errorf("%v is out of range", x)
		}
		n = int64(x)
	case int:
		n = int64(x)
	case int64:
		n = x
	default:
		return 0, fmt.Errorf("%#v is not an integer", raw)
	}
	if n < 0 || n > maxSchemaVersion {
		return 0, fmt.Errorf("%d is out of range 0..%d", n, maxSchemaVersion)
	}
	return int(n), nil
}
