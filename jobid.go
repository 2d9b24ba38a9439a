package jobstore

import (
	"crypto/rand"
	"sync"
	"time"
)

// jobIDTimeLayout is fixed width (for years 1000-9999), so that the lexical
// order of IDs is the order of their times.
const jobIDTimeLayout = "20060102T150405.000000Z"

// jobIDAlphabet is Crockford's base 32, lowercase: no i, l, o or u.
const jobIDAlphabet = "0123456789abcdefghjkmnpqrstvwxyz"

// jobIDRandomLen random characters carry 50 bits: two IDs of the same
// microsecond, on any processes or hosts, collide with probability 2^-50.
const jobIDRandomLen = 10

var lastJobID struct {
	sync.Mutex
	t time.Time
}

// NewJobID returns a new job ID such as "20261130T093540.123456Z-7k2m9xq4ab":
// the UTC time to the microsecond, then 10 random characters (crypto/rand).
// IDs sort by time as strings; within one process each ID sorts after the
// previous one (a repeated microsecond is bumped by one), across processes
// and hosts they are unique, with clocks deciding the order. An ID is valid
// per ValidateJobID.
func NewJobID() string {
	lastJobID.Lock()
	t := Now()
	if !t.After(lastJobID.t) {
		t = lastJobID.t.Add(time.Microsecond)
	}
	lastJobID.t = t
	lastJobID.Unlock()

	var r [jobIDRandomLen]byte
	_, _ = rand.Read(r[:]) // crypto/rand.Read never fails (it crashes the program instead)
	b := make([]byte, 0, len(jobIDTimeLayout)+1+jobIDRandomLen)
	b = t.AppendFormat(b, jobIDTimeLayout)
	b = append(b, '-')
	for _, c := range r {
		b = append(b, jobIDAlphabet[c&31])
	}
	return string(b)
}
