package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/require"
)

// fastStreak counts jobs that failed fast the same way in a row: what
// stops a worker, and what starts the count again.
func TestFastStreak(t *testing.T) {
	ff := failFast{after: 3, within: time.Second}
	code := func(n int) *int { return &n }
	fast := func(c int) jobEnd {
		return jobEnd{state: jobstore.Failed, exitCode: code(c), ran: time.Millisecond}
	}
	slow := jobEnd{state: jobstore.Failed, exitCode: code(2), ran: 2 * time.Second}
	atTheWindow := jobEnd{state: jobstore.Failed, exitCode: code(2), ran: time.Second}
	succeeded := jobEnd{state: jobstore.Succeeded, exitCode: code(0), ran: time.Millisecond}
	cancelled := jobEnd{state: jobstore.Cancelled, exitCode: code(143), ran: time.Millisecond}
	notRun := jobEnd{state: jobstore.Failed} // its output file was in the way
	notRecorded := jobEnd{exitCode: code(2), ran: time.Millisecond}
	for _, tc := range []struct {
		name  string
		ends  []jobEnd
		after int // -1: never stops
	}{
		{"three fast, one status", []jobEnd{fast(2), fast(2), fast(2)}, 3},
		{"the window counts as fast", []jobEnd{fast(2), atTheWindow, fast(2)}, 3},
		{"a status from a signal counts too", []jobEnd{fast(139), fast(139), fast(139)}, 3},
		{"another status starts again", []jobEnd{fast(2), fast(2), fast(3), fast(3), fast(3)}, 5},
		{"a slow failure starts again", []jobEnd{fast(2), fast(2), slow, fast(2), fast(2), fast(2)}, 6},
		{"a success starts again", []jobEnd{fast(2), fast(2), succeeded, fast(2), fast(2)}, -1},
		{"a cancel starts again", []jobEnd{fast(2), fast(2), cancelled, fast(2), fast(2)}, -1},
		{"a job whose command did not run starts again", []jobEnd{fast(2), fast(2), notRun, fast(2), fast(2)}, -1},
		{"a job not recorded starts again", []jobEnd{fast(2), fast(2), notRecorded, fast(2), fast(2)}, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s fastStreak
			stoppedAt := -1
			for i, end := range tc.ends {
				if s.add(ff, end, fmt.Sprintf("j%d", i)) && stoppedAt < 0 {
					stoppedAt = i + 1
				}
			}
			require.Equal(t, tc.after, stoppedAt)
		})
	}
	t.Run("after 0: never", func(t *testing.T) {
		var s fastStreak
		for i := range 100 {
			require.False(t, s.add(failFast{within: time.Second}, fast(2), fmt.Sprint(i)))
		}
	})
}
