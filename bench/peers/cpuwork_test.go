package main

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestCPUWork_SpendsTheCPUItIsGiven: a call of spend uses about its
// duration of this process's CPU (getrusage), neither nothing (a loop the
// compiler dropped) nor many times more (a calibration off by a factor).
// The bounds are wide: the calibration is timed on a shared machine.
func TestCPUWork_SpendsTheCPUItIsGiven(t *testing.T) {
	const d, calls = 5 * time.Millisecond, 20
	w, err := newCPUWork(d)
	if err != nil {
		t.Fatal(err)
	}
	before, err := selfCPU()
	if err != nil {
		t.Skipf("this system's CPU time cannot be read: %v", err)
	}
	for range calls {
		w.spend()
	}
	after, err := selfCPU()
	if err != nil {
		t.Fatal(err)
	}
	used := (after - before) / calls
	if used < d/3 || used > 3*d {
		t.Errorf("a call of spend used %v of CPU, want about %v", used, d)
	}
}

func TestNewCPUWork_RefusesNoWork(t *testing.T) {
	for _, d := range []time.Duration{0, -time.Millisecond} {
		if _, err := newCPUWork(d); err == nil {
			t.Errorf("newCPUWork(%v) = nil error, want one", d)
		}
	}
}

func TestParseDurations(t *testing.T) {
	tests := []struct {
		in      string
		want    []time.Duration
		wantErr string
	}{
		{in: "", want: nil},
		{in: "  ", want: nil},
		{in: "250us", want: []time.Duration{250 * time.Microsecond}},
		{in: "250us, 1ms,2ms", want: []time.Duration{250 * time.Microsecond, time.Millisecond, 2 * time.Millisecond}},
		{in: "1ms,", wantErr: "invalid duration"},
		{in: "fast", wantErr: "invalid duration"},
		{in: "0s", wantErr: "positive"},
		{in: "1ms,-1ms", wantErr: "positive"},
		{in: "1ms,1000us", wantErr: "given twice"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q", tt.in), func(t *testing.T) {
			got, err := parseDurations(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("parseDurations(%q) = %v, %v; want an error with %q", tt.in, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("parseDurations(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
		})
	}
}
