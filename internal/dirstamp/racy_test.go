package dirstamp_test

import (
	"testing"
	"time"

	"github.com/axqua/jobstore/internal/dirstamp"
	"github.com/stretchr/testify/require"
)

// Tick is the coarse tick for a time in whole seconds, the fine one for a
// time with a fraction: a time of a coarse filesystem is never given the
// fine tick.
func TestTick(t *testing.T) {
	sec := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC).UnixNano()
	for _, tc := range []struct {
		name  string
		mtime int64
		tick  time.Duration
	}{
		{"whole seconds", sec, dirstamp.CoarseTick},
		{"a nanosecond past", sec + 1, dirstamp.FineTick},
		{"100 ns units", sec + 1234500, dirstamp.FineTick},
		{"before 1970, whole", -int64(time.Second), dirstamp.CoarseTick},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.tick, dirstamp.Tick(tc.mtime))
		})
	}
}
