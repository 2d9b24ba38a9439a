package jobstore

import (
	"encoding/json"
	"reflect"
	"testing"
)

// writtenSeeds are status records as jobstore writes them, and near misses
// that decodeWritten must leave to encoding/json.
var writtenSeeds = []string{
	`{}`,
	"{\n  \"schema_version\": 1,\n  \"job_id\": \"job-a\",\n  \"state\": \"running\",\n  \"seq\": 2,\n  \"progress\": 0.25,\n" +
		"  \"message\": \"rendering frame 12 of 48\",\n  \"updated_at\": \"2026-11-30T09:35:41.123456+00:00\",\n" +
		"  \"started_at\": \"2026-11-30T09:35:40.123456+00:00\",\n  \"pid\": 4242,\n  \"host\": \"render-7\"\n}\n",
	`{"schema_version":1,"job_id":"j","state":"failed","seq":18446744073709551615,"progress":1,"message":"été ✓",` +
		`"updated_at":"2026-11-30 09:35:41","started_at":null,"finished_at":"2026-11-30T09:35:41Z","pid":-1,` +
		`"host":"h","pid_scope":"boot:x","pid_start":"123","lease_ms":90000,"attempt":3,"exit_code":-9,"error":"e","remedy":"r"}`,
	`{"exit_code":null,"progress":null,"finished_at":null}`,
	`{"progress":1e-3,"exit_code":0}`, `{"progress":-0.0}`, `{"progress":1E+2}`, `{"progress":1e400}`,
	`{"seq":18446744073709551616}`, `{"seq":-0}`, `{"seq":1.0}`, `{"seq":1e2}`, `{"seq":01}`, `{"seq":"1"}`, `{"seq":null}`,
	`{"pid":9223372036854775808}`, `{"lease_ms":-9223372036854775808}`, `{"schema_version":null}`,
	`{"message":"a\"b"}`, `{"message":"a\\b"}`, `{"message":"\u00e9"}`, "{\"message\":\"a\tb\"}", "{\"message\":\"\xff\"}",
	`{"Seq":1}`, `{"seq":1,"seq":2}`, `{"seq":1,"SEQ":2}`, `{"other":1}`, `{"seq":1,}`, `{,}`, `{"seq" 1}`,
	`{"seq":1}{}`, `{"seq":1} x`, ` {"seq":1} `, `[]`, `null`, ``, `{"updated_at":"yesterday"}`, `{"updated_at":null}`,
	`{"updated_at":"0000-01-01T00:00:00Z"}`, `{"started_at":"2026-11-30T09:35:41.123456+02:00"}`, `{"state":"","job_id":""}`,
	`{"schema_version":2,"state":"queued","seq":3,"retry_at":"2026-11-30T09:36:00.5+00:00"}`, `{"retry_at":null}`, `{"retry_at":"soon"}`,
	`{"schema_version":2,"state":"queued","attempts":[{"attempt":1,"state":"failed","ended_at":"2026-11-30T09:35:40Z"}]}`,
}

// FuzzDecodeWritten: whatever decodeWritten accepts, encoding/json accepts
// too and decodes to the same value; what it refuses is left to
// encoding/json (nothing to compare).
//
//	go test -run '^$' -fuzz FuzzDecodeWritten -fuzztime 60s .
func FuzzDecodeWritten(f *testing.F) {
	for _, s := range writtenSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var fast jobStatusJSON
		if !fast.decodeWritten(b) {
			return
		}
		var slow jobStatusJSON
		if err := json.Unmarshal(b, &slow); err != nil {
			t.Fatalf("decodeWritten accepted %q, which encoding/json refuses: %v", b, err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q: decodeWritten gives\n%#v\nencoding/json gives\n%#v", b, fast, slow)
		}
	})
}

// TestDecodeWritten_TakesWhatWritersWriteAndLeavesTheRest: the records
// jobstore writes (every field set, and the fewest) take the fast way, and
// the near misses among writtenSeeds do not, so that FuzzDecodeWritten's
// comparison is not vacuous.
func TestDecodeWritten_TakesWhatWritersWriteAndLeavesTheRest(t *testing.T) {
	p, code, started := 0.5, 3, Now()
	for name, st := range map[string]JobStatus{
		"fewest fields": {State: Queued, Seq: 1, UpdatedAt: Now()},
		"every field": {State: Failed, Seq: 9, Progress: &p, Message: "it said \"no\" — twice", UpdatedAt: Now(), StartedAt: &started,
			FinishedAt: &started, PID: 4242, Host: "render-7", PIDScope: "boot", PIDStart: "77", Lease: 90e9, Attempt: 2, ExitCode: &code,
			Error: "exit status 3", Remedy: "read the log"},
	} {
		t.Run(name, func(t *testing.T) {
			b, err := marshalRecord(st)
			if err != nil {
				t.Fatal(err)
			}
			var j jobStatusJSON
			ok := j.decodeWritten(b)
			if name == "every field" { // the message's escaped quotes go to encoding/json
				if ok {
					t.Fatalf("decodeWritten took %s, which has escapes", b)
				}
				return
			}
			if !ok {
				t.Fatalf("decodeWritten refused what a writer writes:\n%s", b)
			}
		})
	}
	taken := 0
	for _, s := range writtenSeeds {
		var j jobStatusJSON
		if j.decodeWritten([]byte(s)) {
			taken++
		}
	}
	if taken == 0 || taken == len(writtenSeeds) {
		t.Fatalf("decodeWritten took %d of %d seeds: the seeds must hold both kinds", taken, len(writtenSeeds))
	}
	t.Logf("decodeWritten took %d of %d seeds", taken, len(writtenSeeds))
}

// TestWrittenTime_ReadsWhatParseTimeReads: each timestamp writtenTime
// takes, parseTime takes too and reads the same; the ones it leaves are
// out of its form or out of range.
func TestWrittenTime_ReadsWhatParseTimeReads(t *testing.T) {
	for _, tc := range []struct {
		s    string
		fast bool
	}{
		{"2026-11-30T09:35:41.123456+00:00", true},
		{"0001-01-01T00:00:00.000000+00:00", true},
		{"9999-12-31T23:59:59.999999+00:00", true},
		{"2024-02-29T12:00:00.000001+00:00", true},
		{"2023-02-29T12:00:00.000000+00:00", false},
		{"2026-04-31T12:00:00.000000+00:00", false},
		{"0000-01-01T00:00:00.000000+00:00", false},
		{"2026-13-01T00:00:00.000000+00:00", false},
		{"2026-00-01T00:00:00.000000+00:00", false},
		{"2026-01-00T00:00:00.000000+00:00", false},
		{"2026-01-01T24:00:00.000000+00:00", false},
		{"2026-01-01T23:60:00.000000+00:00", false},
		{"2026-01-01T23:59:60.000000+00:00", false},
		{"2026-11-30T09:35:41.123456+01:00", false},
		{"2026-11-30T09:35:41.123456Z", false},
		{"2026-11-30 09:35:41.123456+00:00", false},
		{"2026-11-30T09:35:41.1234567+00:00", false},
		{"2026-11-30T09:35:41+00:00", false},
		{"2026-11-30T09:35:4a.123456+00:00", false},
		{"+026-11-30T09:35:41.123456+00:00", false},
	} {
		t.Run(tc.s, func(t *testing.T) {
			got, ok := writtenTime([]byte(tc.s))
			if ok != tc.fast {
				t.Fatalf("writtenTime took it: %v, want %v", ok, tc.fast)
			}
			if !ok {
				return
			}
			want, err := parseTime(tc.s)
			if err != nil {
				t.Fatalf("writtenTime took what parseTime refuses: %v", err)
			}
			if !reflect.DeepEqual(got, want) || !got.Equal(want) {
				t.Fatalf("writtenTime %v, parseTime %v", got, want)
			}
		})
	}
}
