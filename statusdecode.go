package jobstore

import (
	"encoding/json"
	"strconv"
	"time"
	"unicode/utf8"
)

// decodeWritten decodes b into j without reflection when b has the form
// jobstore's writers give status.json: one object, each key one of
// jobStatusJSON's, in lower case, at most once; strings without escapes;
// integers without fraction or exponent; null only where the field is a
// pointer; JSON whitespace anywhere between tokens. It reports false for
// anything else, leaving j unspecified: the caller then decodes with
// encoding/json, which alone says what is wrong. What it accepts, it
// decodes exactly as json.Unmarshal would (FuzzDecodeWritten compares the
// two).
//
// A reader of status.json decodes it on every poll; encoding/json's scan,
// reflection and Unmarshaler calls were most of ReadStatus's CPU.
func (j *jobStatusJSON) decodeWritten(b []byte) bool {
	p := writtenParser{b: b}
	if !p.skip('{') {
		return false
	}
	var seen uint32
	if !p.skip('}') {
		for {
			key, ok := p.str()
			if !ok || !p.skip(':') {
				return false
			}
			bit, ok := j.field(&p, key)
			if !ok || seen&bit != 0 {
				return false
			}
			seen |= bit
			if p.skip('}') {
				break
			}
			if !p.skip(',') {
				return false
			}
		}
	}
	p.space()
	return p.i == len(b)
}

// field decodes the value of key into its field of j; bit is the field's
// own, to refuse a key seen twice.
func (j *jobStatusJSON) field(p *writtenParser, key []byte) (bit uint32, ok bool) {
	switch string(key) { // no allocation: the compiler compares in place
	case "schema_version":
		return 1 << 0, p.int(&j.SchemaVersion)
	case "job_id":
		return 1 << 1, p.text(&j.JobID)
	case "state":
		var s string
		ok := p.text(&s)
		j.State = State(s)
		return 1 << 2, ok
	case "seq":
		return 1 << 3, p.uint(&j.Seq)
	case "progress":
		if p.null() {
			return 1 << 4, true
		}
		lit, ok := p.number()
		if !ok {
			return 0, false
		}
		f, err := strconv.ParseFloat(string(lit), 64)
		j.Progress = &f
		return 1 << 4, err == nil
	case "message":
		return 1 << 5, p.text(&j.Message)
	case "updated_at":
		return 1 << 6, p.time(&j.UpdatedAt)
	case "started_at":
		return 1 << 7, p.timePtr(&j.StartedAt)
	case "finished_at":
		return 1 << 8, p.timePtr(&j.FinishedAt)
	case "pid":
		return 1 << 9, p.int(&j.PID)
	case "host":
		return 1 << 10, p.text(&j.Host)
	case "pid_scope":
		return 1 << 11, p.text(&j.PIDScope)
	case "pid_start":
		return 1 << 12, p.text(&j.PIDStart)
	case "lease_ms":
		return 1 << 13, p.int64(&j.LeaseMS, 64)
	case "attempt":
		return 1 << 14, p.uint(&j.Attempt)
	case "exit_code":
		if p.null() {
			return 1 << 15, true
		}
		var v int
		ok := p.int(&v)
		j.ExitCode = &v
		return 1 << 15, ok
	case "error":
		return 1 << 16, p.text(&j.Error)
	case "remedy":
		return 1 << 17, p.text(&j.Remedy)
	case "retry_at":
		return 1 << 18, p.timePtr(&j.RetryAt)
	}
	return 0, false
}

// writtenParser reads the tokens decodeWritten accepts from b, from i on;
// each method skips the whitespace before its token.
type writtenParser struct {
	b []byte
	i int
}

// space skips JSON whitespace.
func (p *writtenParser) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// skip consumes c if it comes next.
func (p *writtenParser) skip(c byte) bool {
	p.space()
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

// null consumes a null if it comes next.
func (p *writtenParser) null() bool {
	p.space()
	if len(p.b)-p.i >= 4 && string(p.b[p.i:p.i+4]) == "null" {
		p.i += 4
		return true
	}
	return false
}

// str is a string without escapes, control characters or invalid UTF-8
// (which encoding/json would replace), without its quotes.
func (p *writtenParser) str() ([]byte, bool) {
	if !p.skip('"') {
		return nil, false
	}
	start, ascii := p.i, true
	for ; p.i < len(p.b); p.i++ {
		switch c := p.b[p.i]; {
		case c == '"':
			s := p.b[start:p.i]
			p.i++
			return s, ascii || utf8.Valid(s)
		case c == '\\' || c < 0x20:
			return nil, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return nil, false
}

// text is a string field's value.
func (p *writtenParser) text(dst *string) bool {
	s, ok := p.str()
	*dst = string(s)
	return ok
}

// number is a JSON number's literal: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (p *writtenParser) number() ([]byte, bool) {
	p.space()
	start := p.i
	if p.i < len(p.b) && p.b[p.i] == '-' {
		p.i++
	}
	switch {
	case p.i < len(p.b) && p.b[p.i] == '0':
		p.i++
	case !p.digits():
		return nil, false
	}
	if p.i < len(p.b) && p.b[p.i] == '.' {
		p.i++
		if !p.digits() {
			return nil, false
		}
	}
	if p.i < len(p.b) && (p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		p.i++
		if p.i < len(p.b) && (p.b[p.i] == '+' || p.b[p.i] == '-') {
			p.i++
		}
		if !p.digits() {
			return nil, false
		}
	}
	return p.b[start:p.i], true
}

// digits consumes one or more decimal digits.
func (p *writtenParser) digits() bool {
	start := p.i
	for p.i < len(p.b) && '0' <= p.b[p.i] && p.b[p.i] <= '9' {
		p.i++
	}
	return p.i > start
}

// integer is a number with neither fraction nor exponent (encoding/json
// refuses those for an integer field, with an error this parser leaves to
// it).
func (p *writtenParser) integer() ([]byte, bool) {
	lit, ok := p.number()
	for _, c := range lit {
		if c == '.' || c == 'e' || c == 'E' {
			return nil, false
		}
	}
	return lit, ok
}

// int is an integer that fits in an int.
func (p *writtenParser) int(dst *int) bool {
	var v int64
	ok := p.int64(&v, strconv.IntSize)
	*dst = int(v)
	return ok
}

// int64 is an integer that fits in bits.
func (p *writtenParser) int64(dst *int64, bits int) bool {
	lit, ok := p.integer()
	if !ok {
		return false
	}
	v, err := strconv.ParseInt(string(lit), 10, bits)
	*dst = v
	return err == nil
}

// uint is a non-negative integer that fits in a uint64.
func (p *writtenParser) uint(dst *uint64) bool {
	lit, ok := p.integer()
	if !ok || lit[0] == '-' {
		return false
	}
	v, err := strconv.ParseUint(string(lit), 10, 64)
	*dst = v
	return err == nil
}

// time is a timestamp as isoTime.UnmarshalJSON reads it.
func (p *writtenParser) time(dst *isoTime) bool {
	s, ok := p.str()
	if !ok {
		return false
	}
	if v, ok := writtenTime(s); ok {
		*dst = isoTime(v)
		return true
	}
	v, err := parseTime(string(s))
	*dst = isoTime(v)
	return err == nil
}

// writtenTime reads a timestamp in the form isoTime.MarshalJSON writes,
// "2006-01-02T15:04:05.000000+00:00", every field in range, as parseTime
// would; anything else is false, for parseTime to read or refuse.
func writtenTime(b []byte) (time.Time, bool) {
	if len(b) != len(isoLayout)+len("+00:00") || string(b[len(isoLayout):]) != "+00:00" {
		return time.Time{}, false
	}
	for i, c := range b[:len(isoLayout)] {
		if l := isoLayout[i]; l >= '0' && l <= '9' {
			if c < '0' || c > '9' {
				return time.Time{}, false
			}
		} else if c != l {
			return time.Time{}, false
		}
	}
	num := func(from, to int) int {
		n := 0
		for _, c := range b[from:to] {
			n = n*10 + int(c-'0')
		}
		return n
	}
	year, month, day := num(0, 4), time.Month(num(5, 7)), num(8, 10)
	hour, minute, sec, usec := num(11, 13), num(14, 16), num(17, 19), num(20, 26)
	if year < 1 || month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || sec > 59 {
		return time.Time{}, false
	}
	t := time.Date(year, month, day, hour, minute, sec, usec*1000, time.UTC)
	if t.Day() != day { // 31 April, 29 February of a common year
		return time.Time{}, false
	}
	return normTime(t), true
}

// timePtr is a timestamp, or null (left nil).
func (p *writtenParser) timePtr(dst **isoTime) bool {
	if p.null() {
		return true
	}
	*dst = new(isoTime)
	return p.time(*dst)
}

// decode: see JobSpec.decode. A record as jobstore writes it is decoded
// without reflection (decodeWritten); anything else by encoding/json.
func (s *JobStatus) decode(b []byte) error {
	var j jobStatusJSON
	if !j.decodeWritten(b) {
		j = jobStatusJSON{}
		if err := json.Unmarshal(b, &j); err != nil {
			return err
		}
	}
	lease, err := millis("lease_ms", j.LeaseMS)
	if err != nil {
		return err
	}
	*s = JobStatus{
		SchemaVersion: j.SchemaVersion, JobID: j.JobID, State: j.State, Seq: j.Seq, Progress: j.Progress, Message: j.Message,
		UpdatedAt: time.Time(j.UpdatedAt), StartedAt: (*time.Time)(j.StartedAt), FinishedAt: (*time.Time)(j.FinishedAt),
		PID: j.PID, Host: j.Host, PIDScope: j.PIDScope, PIDStart: j.PIDStart, Lease: lease,
		Attempt: j.Attempt, ExitCode: j.ExitCode, Error: j.Error, Remedy: j.Remedy,
		RetryAt: (*time.Time)(j.RetryAt), Attempts: j.Attempts,
	}
	return nil
}
