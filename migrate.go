package jobstore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"strconv"
)

// Schema versions: this file holds the whole rule. A record's version is its
// "schema_version" (schemaVersion); each kind of record has a schema, the
// version this package writes and the steps that bring an older record to
// it; decodeRecord applies the rule on every read.
//
// Version 2 of job.json and status.json added optional fields only
// (retries and scheduling): a version-1 record is a version-2 record that
// uses none of them, so steps[1] changes nothing and decodeRecord reads
// version 1 directly (direct), and the writers write version 1 whenever a
// record needs no more (writeVersion in model.go). A later version that
// changes a field's meaning adds its step here, and version fixtures in
// testdata; readers, writers and the CLI follow from those.

// migrationStep turns a record of schema version n into one of version n+1. It
// receives a map it may change and return (a deep copy of the caller's);
// migrate stamps the new schema_version itself.
type migrationStep func(map[string]any) (map[string]any, error)

// recordSchema is how one kind of record is versioned.
type recordSchema struct {
	file    string                // the record's file name, for errors
	current int                   // the newest version this package writes and reads
	direct  int                   // versions direct..current decode as they are (0: current only)
	steps   map[int]migrationStep // steps[n] turns version n into n+1
}

// sameFields is the step between two versions whose difference is optional
// fields the older never has.
func sameFields(m map[string]any) (map[string]any, error) { return m, nil }

// specSchema, statusSchema and cancelSchema are the schemas of the package's
// records. Each is built afresh on every call, so nothing can change the
// rule in between. A version-0 record has no step: ErrNoMigration.
func specSchema() recordSchema {
	return recordSchema{file: SpecFile, current: JobSchemaVersion, direct: baseSchemaVersion, steps: map[int]migrationStep{1: sameFields}}
}

func statusSchema() recordSchema {
	return recordSchema{file: StatusFile, current: StatusSchemaVersion, direct: baseSchemaVersion, steps: map[int]migrationStep{1: sameFields}}
}

func cancelSchema() recordSchema { return recordSchema{file: CancelFile, current: CancelSchemaVersion} }

// recordVersion is a record's schema version, for decodeRecord, and
// setRecordVersion stamps the version it is read as.
func (s *JobSpec) recordVersion() int   { return s.SchemaVersion }
func (s *JobStatus) recordVersion() int { return s.SchemaVersion }

func (c *CancelRequest) recordVersion() int { return c.SchemaVersion }

func (s *JobSpec) setRecordVersion(v int)       { s.SchemaVersion = v }
func (s *JobStatus) setRecordVersion(v int)     { s.SchemaVersion = v }
func (c *CancelRequest) setRecordVersion(v int) { c.SchemaVersion = v }

// maxSchemaVersion bounds what counts as a schema version at all: a value
// beyond it is garbage, not a record from the future.
const maxSchemaVersion = math.MaxInt32

// decodeRecord decodes a record of kind sch into out and reports whether it
// was migrated (its version was older than sch.current).
//
// The usual case, a current record, is one parse. Anything else (an older
// or newer version, a wrong type) goes the slow way: decode into a map,
// migrate, decode the result, so that errors name the field and the version
// rule applies before the fields are judged. Bytes that are not one JSON
// value are ErrCorrupt (which the tolerant reader retries).
func decodeRecord[T any, P interface {
	*T
	recordVersion() int
	setRecordVersion(int)
	decode([]byte) error
}](data []byte, sch recordSchema, out P) (migrated bool, err error) {
	err = out.decode(data)
	if v := out.recordVersion(); err == nil && (v == sch.current || (sch.direct > 0 && v >= sch.direct && v <= sch.current)) {
		out.setRecordVersion(sch.current) // read as the current version: its fields mean the same
		return false, nil
	}
	var se *json.SyntaxError
	var ie *Error
	switch {
	case errors.As(err, &se):
		return false, corruptError(data, se)
	case errors.As(err, &ie):
		return false, err // a value the fields cannot hold, named
	}
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // keep big integers (seq) exact through the map
	if derr := dec.Decode(&m); derr != nil || m == nil {
		return false, errInvalid("", "", invalid{subject: sch.file, supported: "a JSON object", msg: "is not a JSON object", remedy: "a record is a JSON object; restore it or remove it"})
	}
	from, _ := schemaVersion(m)
	m, err = migrate(m, sch)
	if err != nil {
		return false, err
	}
	b, err := json.Marshal(m)
	if err != nil {
		return false, errMalformed("", "", sch.file, err, "cannot re-encode the migrated record", "the migration step made a value JSON cannot hold; correct the step")
	}
	var zero T
	*out = zero // forget what the first pass filled in
	if err := out.decode(b); err != nil {
		var ie *Error
		if errors.As(err, &ie) {
			return false, err
		}
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			want := te.Type.String()
			if te.Type == timeType {
				want = "an RFC 3339 or isoformat timestamp"
			}
			return false, errInvalid("", "", invalid{subject: te.Field, found: te.Value, supported: want, msg: "is " + te.Value + ", want " + want})
		}
		return false, errMalformed("", "", sch.file, err, "cannot decode the record", "correct the record, or remove it and write it again")
	}
	return from != sch.current, nil
}

// migrate brings payload, a record decoded into a map, to version
// sch.current.
//
// The record's version is its "schema_version" (a JSON integer; missing
// means 0). Equal: a copy is returned unchanged. Older: sch.steps[n] is
// applied for n = version, version+1, ..., current-1, each on a copy, each
// result stamped with n+1; a missing step is ErrNoMigration naming the
// version. Newer: ErrNewerSchema, naming both versions, with Found and
// Supported set. A schema_version that is not a non-negative integer (a
// string, 1.5, a number beyond 2^31-1) is ErrInvalid with Found set. The
// caller's map, and every map and slice in it, is never changed.
func migrate(payload map[string]any, sch recordSchema) (map[string]any, error) {
	// No op of its own: the reader's (read status, decode spec) names what
	// the caller was doing; migrating is how, not what.
	const op = ""
	current := sch.current
	v, err := schemaVersion(payload)
	if err != nil {
		return nil, errInvalid(op, "", invalid{subject: "schema_version", found: payload["schema_version"], supported: current, msg: err.Error(), remedy: fmt.Sprintf("set schema_version to an integer; this jobstore writes %d", current)})
	}
	if v > current {
		return nil, errNewerSchema(op, v, current)
	}
	out := cloneJSON(payload).(map[string]any) // deep: a step may edit nested values
	for ; v < current; v++ {
		step := sch.steps[v]
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
// by the rule every reader applies (missing or null means 0), without decoding
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
		return 0, errInvalid("read schema_version", "", invalid{subject: "schema_version", found: string(head.SchemaVersion), msg: err.Error(), remedy: "set schema_version to a non-negative integer"})
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

// UnmarshalJSON reads the file format exactly as DecodeCancel does
// (migration, newer-schema refusal, validation, the same *Error). On error c
// is left as it was.
func (c *CancelRequest) UnmarshalJSON(b []byte) error {
	req, _, err := DecodeCancel(b)
	return setDecoded(c, req, err)
}

// DecodeCancel decodes the bytes of a cancel.json exactly as ReadCancel
// does, with no file and no retry: migration in memory, then validation
// (job_id a valid job ID, requested_at present). Bytes that are not one JSON
// value are ErrCorrupt. migrated reports that the request was brought up
// from an older schema version.
func DecodeCancel(data []byte) (req *CancelRequest, migrated bool, err error) {
	return decodeCancel(data)
}

func decodeCancel(data []byte) (*CancelRequest, bool, error) {
	c := new(CancelRequest)
	migrated, err := decodeRecord(data, cancelSchema(), c)
	if err != nil {
		return nil, false, err
	}
	if err := c.validate("", ""); err != nil {
		return nil, false, err
	}
	return c, migrated, nil
}

// DecodeSpec decodes the bytes of a job.json exactly as ReadSpec does, with
// no file and no retry: migration in memory, then validation. migrated
// reports that the bytes held an older schema_version than JobSchemaVersion
// and were migrated (spec.SchemaVersion is JobSchemaVersion either way).
// Bytes that are not one JSON value are ErrCorrupt.
func DecodeSpec(data []byte) (spec JobSpec, migrated bool, err error) {
	return decodeSpec(data, specSchema())
}

func decodeSpec(data []byte, sch recordSchema) (JobSpec, bool, error) {
	var spec JobSpec
	migrated, err := decodeRecord(data, sch, &spec)
	if err != nil {
		return JobSpec{}, false, err
	}
	if err := spec.validate("", ""); err != nil {
		return JobSpec{}, false, err
	}
	return spec, migrated, nil
}

// DecodeStatus decodes the bytes of a status.json exactly as ReadStatus
// does, with no file and no retry: migration in memory, then validation.
// migrated reports that the bytes held an older schema_version than
// StatusSchemaVersion and were migrated. Bytes that are not one JSON value
// are ErrCorrupt.
func DecodeStatus(data []byte) (st *JobStatus, migrated bool, err error) {
	return decodeStatus(data, statusSchema())
}

func decodeStatus(data []byte, sch recordSchema) (*JobStatus, bool, error) {
	st := new(JobStatus)
	migrated, err := decodeRecord(data, sch, st)
	if err != nil {
		return nil, false, err
	}
	if err := st.validate("", ""); err != nil {
		return nil, false, err
	}
	return st, migrated, nil
}

// UnmarshalJSON reads the file format exactly as DecodeSpec does: an older
// record is migrated, a newer one is ErrNewerSchema, and the result is
// validated (ErrInvalid, Subject naming the field), with the same *Error
// DecodeSpec returns. On error s is left as it was. Params is kept
// compacted, a JSON null in params is read as no params, and empty labels
// as nil, so that a spec re-reads to the value it was written with.
func (s *JobSpec) UnmarshalJSON(b []byte) error {
	spec, _, err := DecodeSpec(b)
	return setDecoded(s, &spec, err)
}

// setDecoded is the end of every UnmarshalJSON: dst takes the decoded
// value, unless decoding failed, when dst is left as it was.
func setDecoded[T any](dst, decoded *T, err error) error {
	if err != nil {
		return err
	}
	*dst = *decoded
	return nil
}

// UnmarshalJSON reads the file format exactly as DecodeStatus does: an
// older record is migrated, a newer one is ErrNewerSchema, and the result
// is validated (ErrInvalid, Subject naming the field), with the same *Error
// DecodeStatus returns. On error s is left as it was.
func (s *JobStatus) UnmarshalJSON(b []byte) error {
	st, _, err := DecodeStatus(b)
	return setDecoded(s, st, err)
}

// jsonDecode is json.Unmarshal with the package's errors: ErrCorrupt for
// bytes that are not one JSON value, ErrInvalid for a value that does not
// fit v.
func jsonDecode(data []byte, v any) error {
	err := json.Unmarshal(data, v)
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return corruptError(data, se)
	}
	if err != nil {
		subject := ""
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			subject = te.Field
		}
		return errMalformed("", "", subject, err, "does not fit the value it is read into", "correct the record, or read it into a matching type")
	}
	return nil
}

const corruptRemedy = "jobstore's durable writes are never torn, so the file was damaged by a power cut after a NoSync write " +
	"(a coalesced progress update), by a writer that did not use the atomic protocol, or by the disk; restore it from a backup or remove it " +
	"(a removed status.json reads as \"nothing has run yet\"); 'jobstore check ROOT' lists the other unreadable jobs"

// corruptError is the ErrCorrupt error for bytes that are not one JSON value; its
// message names what the damage looks like.
func corruptError(data []byte, se *json.SyntaxError) error {
	return errCorrupt(len(data), se, describeDamage(data, se), corruptRemedy)
}

// describeDamage names what a bad file looks like.
func describeDamage(data []byte, se *json.SyntaxError) string {
	trimmed := bytes.TrimRight(data, "\x00")
	end, complete, cut := firstValue(trimmed)
	switch {
	case len(data) == 0:
		return "the file is empty: looks like an interrupted write"
	case len(trimmed) == 0:
		return fmt.Sprintf("the file holds only NUL bytes (%d): looks like an interrupted write whose data never reached the disk", len(data))
	case len(trimmed) < len(data) && (complete || cut):
		return fmt.Sprintf("the file ends in %d NUL bytes: looks like an interrupted write whose data never reached the disk", len(data)-len(trimmed))
	case cut:
		return fmt.Sprintf("the JSON ends early at byte %d: looks like an interrupted write (truncated file)", len(data))
	case complete:
		return fmt.Sprintf("not one JSON value: more data follows the value that ends at byte %d", end)
	default:
		return fmt.Sprintf("not JSON at all (byte %d of %d)", se.Offset, len(data))
	}
}

// firstValue decodes the first JSON value of data: complete (ending at byte
// end), or cut short (data is the beginning of a value, or only blanks).
func firstValue(data []byte) (end int64, complete, cut bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	err := dec.Decode(new(json.RawMessage))
	return dec.InputOffset(), err == nil, errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)
}
