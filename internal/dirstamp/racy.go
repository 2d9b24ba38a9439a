package dirstamp

import "time"

// The ticks of directory times: how long after a time a change may leave
// a directory's time as it was ("racily clean", as git calls it). The rule
// that uses them, when an unchanged stamp can be trusted, is the jobs
// package's (cleanStamp): it compares no time with a clock, since the
// clock that stamps a shared filesystem's times may be a server's, off
// this host's by any amount.
const (
	// CoarseTick is the coarsest tick of a directory time: FAT keeps 2 s,
	// ext3 and HFS+ whole seconds.
	CoarseTick = 2 * time.Second
	// FineTick is how long a time with a fraction of a second may be
	// stamped again unchanged: ext4, XFS, Btrfs, NTFS, NFS and SMB keep
	// 100 ns units or less, but stamp them from a clock that ticks every
	// few milliseconds (Linux's coarse clock, Windows' timer).
	FineTick = 100 * time.Millisecond
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
