package dirstamp_test

import (
	"testing"
	"time"

	"github.com/axqua/jobstore/internal/dirstamp"
	"github.com/stretchr/testify/require"
)

func TestRacy(t *testing.T) {
	read := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	at := func(d time.Duration) int64 { return read.Add(d).UnixNano() }
	for _, tc := range []struct {
		name string
		s    dirstamp.Stamp
		racy bool
	}{
		{"older than the window", dirstamp.Stamp{Mtime: at(-dirstamp.RacyWindow - time.Nanosecond), Ctime: at(-time.Hour)}, false},
		{"mtime within the window", dirstamp.Stamp{Mtime: at(-time.Second), Ctime: at(-time.Hour)}, true},
		{"ctime within the window", dirstamp.Stamp{Mtime: at(-time.Hour), Ctime: at(-time.Second)}, true},
		{"after the read (a clock ahead)", dirstamp.Stamp{Mtime: at(time.Minute), Ctime: at(time.Minute)}, true},
		{"exactly the window", dirstamp.Stamp{Mtime: at(-dirstamp.RacyWindow), Ctime: at(-time.Hour)}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.racy, tc.s.Racy(read))
		})
	}
}

// Settled trusts a time older than the moment by the coarsest tick and the
// skew of the clock that stamped it: a second for this host's, a minute for
// a file server's. Stamp.Racy is the same rule for a local clock.
func TestSettled(t *testing.T) {
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	before := func(d time.Duration) int64 { return at.Add(-d).UnixNano() }
	for _, tc := range []struct {
		name    string
		mtime   int64
		remote  bool
		settled bool
	}{
		{"local, past the window", before(dirstamp.CoarseTick + dirstamp.LocalSkew + time.Nanosecond), false, true},
		{"local, exactly the window", before(dirstamp.CoarseTick + dirstamp.LocalSkew), false, false},
		{"local, within the coarse tick", before(dirstamp.CoarseTick), false, false},
		{"remote, past the local window only", before(dirstamp.RacyWindow + time.Second), true, false},
		{"remote, past its window", before(dirstamp.CoarseTick + dirstamp.RemoteSkew + time.Nanosecond), true, true},
		{"after the moment (a clock ahead)", at.Add(time.Second).UnixNano(), false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.settled, dirstamp.Settled(tc.mtime, at, tc.remote))
			if !tc.remote {
				s := dirstamp.Stamp{Mtime: tc.mtime, Ctime: tc.mtime}
				require.Equal(t, !tc.settled, s.Racy(at), "Stamp.Racy follows Settled")
			}
		})
	}
	require.Equal(t, dirstamp.RacyWindow, dirstamp.Window(false))
	require.Equal(t, dirstamp.CoarseTick+dirstamp.RemoteSkew, dirstamp.Window(true))
}

// Look asks for a read whenever the time moved, and once more, only once,
// when the same time has been seen for its whole tick: 2 s for a time in
// whole seconds, 100 ms for one with a fraction.
func TestSeen_Look(t *testing.T) {
	// Times from a minute ago (recent, by a clock that may be a file
	// server's) and from an hour ago (settled at once).
	recent := time.Now().Add(-time.Minute + 10*time.Second).Truncate(time.Second)
	for _, tc := range []struct {
		name  string
		mtime int64
		tick  time.Duration
	}{
		{"whole seconds", recent.UnixNano(), dirstamp.CoarseTick},
		{"with a fraction", recent.Add(123 * time.Millisecond).UnixNano(), dirstamp.FineTick},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.tick, dirstamp.Tick(tc.mtime))
			var s dirstamp.Seen
			const first = int64(1) // the caller's monotonic clock
			require.True(t, s.Look(tc.mtime, first), "the first look reads")
			require.False(t, s.Look(tc.mtime, first+int64(tc.tick)-1), "within the tick: nothing to read yet")
			require.True(t, s.Look(tc.mtime, first+int64(tc.tick)), "the tick is over: one more read settles it")
			require.False(t, s.Look(tc.mtime, first+int64(10*tc.tick)), "settled: never read again for this time")
			require.True(t, s.Look(tc.mtime+1, first+int64(11*tc.tick)), "a new time reads at once")
		})
	}
	t.Run("settled at once", func(t *testing.T) {
		old := time.Now().Add(-time.Hour).UnixNano()
		var s dirstamp.Seen
		require.True(t, s.Look(old, 1), "the first look reads")
		require.False(t, s.Look(old, 2), "a time settled by the wall clock is not read again")
	})
	t.Run("SettledAt", func(t *testing.T) {
		s := dirstamp.SettledAt(42, 1)
		require.False(t, s.Look(42, 2), "a settled time is not read again")
		require.True(t, s.Look(43, 3), "a new time reads")
	})
}
