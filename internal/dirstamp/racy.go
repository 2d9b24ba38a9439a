package dirstamp

import "time"

// The racily clean policy: when a directory's time, unchanged since the
// last read of its files, can be trusted to say that nothing changed.
//
// A filesystem stamps a directory's time from a clock that ticks, so a
// second change within one tick leaves the time it had ("racily clean", as
// git calls it). A time is trusted in one of two ways:
//
//   - by this host's wall clock (Settled, Stamp.Racy): the time is older
//     than the moment the files were read by more than Window, the
//     coarsest tick plus how far the clock that stamped it may be off this
//     host's;
//   - by watching it (Seen.Look): the same time, seen for a whole Tick on
//     this host's monotonic clock, has had its tick end, and one more read
//     settles it.
const (
	// CoarseTick is the coarsest tick of a directory time: FAT keeps 2 s,
	// ext3 and HFS+ whole seconds.
	CoarseTick = 2 * time.Second
	// FineTick is how long a time with a fraction of a second may be
	// stamped again unchanged: ext4, XFS, Btrfs, NTFS, NFS and SMB keep
	// 100 ns units or less, but stamp them from a clock that ticks every
	// few milliseconds (Linux's coarse clock, Windows' timer).
	FineTick = 100 * time.Millisecond
	// LocalSkew is how far the clock that stamps a local filesystem's times
	// may be off the clock this host reads.
	LocalSkew = time.Second
	// RemoteSkew is how far a file server's clock (NFS, SMB, a FUSE server)
	// may be behind this host's.
	RemoteSkew = time.Minute
	// RacyWindow is Window(false): how much older than a look a stamp's
	// times must be for a change after the look to change the stamp.
	// Beyond it a change may go unseen until the directory changes again.
	RacyWindow = CoarseTick + LocalSkew
)

// Tick is how long after a directory time mtime (ns since the Unix epoch)
// a change may still leave the same time: CoarseTick for a time in whole
// seconds (a filesystem that keeps no fraction), FineTick for any other.
func Tick(mtime int64) time.Duration {
	if mtime%int64(time.Second) == 0 {
		return CoarseTick
	}
	return FineTick
}

// Window is how much older than a moment of this host's wall clock a
// directory time must be to be trusted: CoarseTick, plus RemoteSkew where
// the time may come from another host's clock (remote), else LocalSkew.
func Window(remote bool) time.Duration {
	if remote {
		return CoarseTick + RemoteSkew
	}
	return RacyWindow
}

// Settled reports whether a directory time mtime (ns since the Unix epoch)
// is older than at by more than Window(remote): a change after at changes
// it.
func Settled(mtime int64, at time.Time, remote bool) bool {
	return mtime < at.Add(-Window(remote)).UnixNano()
}

// Racy reports whether s cannot be trusted to change with the next change
// of the directory after readAt, the moment (on this host's clock) just
// before the directory's files were read: its modification or change time
// is not Settled at readAt, by a clock within LocalSkew of this host's.
func (s Stamp) Racy(readAt time.Time) bool {
	return !Settled(s.Mtime, readAt, false) || !Settled(s.Ctime, readAt, false)
}

// Seen is a directory's modification time as of the last read of its
// files, and whether that read is known to have seen every change that
// left this time. Its clock is the caller's monotonic clock in
// nanoseconds, never 0. The zero Seen has seen nothing.
type Seen struct {
	mtime   int64 // ns since the Unix epoch
	first   int64 // when mtime was first seen, on the caller's clock; 0: never
	settled bool
}

// SettledAt is a Seen of mtime, first seen at now, that is settled: the
// caller knows the read that followed it saw every change (mtime is
// Settled before that read began).
func SettledAt(mtime, now int64) Seen { return Seen{mtime: mtime, first: now, settled: true} }

// Look records a stat of the directory (its modification time mtime, at
// now on the caller's clock) and reports whether its files must be read:
// the time differs from the last one, or it is the same and the read that
// followed it may have missed a change within the same tick, and the tick
// is surely over (Tick(mtime) after the time was first seen): then one
// more read settles it. A time Settled by this host's wall clock, by a
// clock that may be a file server's, is settled at once. The caller reads
// after Look returns true.
func (s *Seen) Look(mtime, now int64) bool {
	if s.first == 0 || mtime != s.mtime {
		*s = Seen{mtime: mtime, first: now, settled: Settled(mtime, time.Now(), true)}
		return true
	}
	if s.settled {
		return false
	}
	s.settled = now-s.first >= int64(Tick(mtime))
	return s.settled
}
