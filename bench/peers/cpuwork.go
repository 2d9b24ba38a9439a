package main

import (
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"
)

// cpuWork spends a fixed amount of CPU on each call of spend: a loop of
// arithmetic whose length was set once, by calibrate, to take d of one idle
// CPU. Its iterations are a fixed count, so on a busy machine a call does
// the same work and takes longer (and, where the CPUs run slower when all
// are busy, more CPU time): it is work of the code's own, as decoding a
// record or picking the next job is, not a pause.
type cpuWork struct {
	d     time.Duration
	iters int
	sink  atomic.Uint64 // the loop's result, kept so that the compiler keeps the loop
}

// calibrationRounds is how many times calibrate times the loop.
const calibrationRounds = 7

// newCPUWork returns work of d per call, calibrated now; d must be
// positive.
func newCPUWork(d time.Duration) (*cpuWork, error) {
	if d <= 0 {
		return nil, fmt.Errorf("CPU work of %v per job: give a positive duration", d)
	}
	w := &cpuWork{d: d}
	w.iters = calibrate(w, d)
	return w, nil
}

// calibrate returns the iterations of the loop that take d of one CPU: it
// times a run of about 10 ms several times and scales the fastest, the one
// least disturbed by anything else on the machine.
func calibrate(w *cpuWork, d time.Duration) int {
	probe := 1 << 16
	for {
		start := time.Now()
		w.loop(probe)
		if time.Since(start) >= 10*time.Millisecond {
			break
		}
		probe *= 2
	}
	fastest := time.Duration(1<<63 - 1)
	for range calibrationRounds {
		start := time.Now()
		w.loop(probe)
		fastest = min(fastest, time.Since(start))
	}
	return max(1, int(float64(d)*float64(probe)/float64(fastest)))
}

// spend runs the loop once: d of one CPU.
func (w *cpuWork) spend() { w.loop(w.iters) }

// loop runs n rounds of a xorshift generator.
func (w *cpuWork) loop(n int) {
	x := w.sink.Load() | 1
	for range n {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	w.sink.Store(x)
}

// parseDurations parses a comma-separated list of distinct positive
// durations ("250us,1ms"), each naming a system of its own; an empty
// string is none.
func parseDurations(s string) ([]time.Duration, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []time.Duration
	for _, f := range strings.Split(s, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(f))
		if err != nil {
			return nil, err
		}
		if d <= 0 {
			return nil, fmt.Errorf("%q: give a positive duration", f)
		}
		if slices.Contains(out, d) {
			return nil, fmt.Errorf("%v is given twice: give each duration once", d)
		}
		out = append(out, d)
	}
	return out, nil
}
