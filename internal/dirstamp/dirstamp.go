// Package dirstamp tells cheaply whether a directory's entries may have
// changed since it was last looked at: one stat per directory, compared
// with the stamp of the previous look, instead of reading the files in it.
//
// A directory's modification and change times are set whenever an entry
// is created, removed or renamed in it, a rename over an existing name
// included (POSIX rename(2), and NTFS). A file rewritten by replacing it
// (a temp file renamed over it) therefore changes its directory's stamp; a
// file written in place does not.
//
// The one caveat is the timestamps' granularity, as git meets it with
// "racily clean" index entries: a change made in the same clock tick as
// the look that read the directory's files leaves the stamp as it was.
// The ticks are in racy.go; when an unchanged stamp may be trusted is the
// caller's rule.
package dirstamp

import (
	"errors"
	"io/fs"
)

// Errors of Lstat and FileStamp for an entry of the wrong type (a symbolic
// link included: it is never followed).
var (
	ErrNotDir     = errors.New("not a directory")
	ErrNotRegular = errors.New("not a regular file")
)

// Stamp is what one stat of a directory says about its entries. Two equal
// stamps of the same path mean the same directory (device and inode, where
// the platform has them) with no entry created, removed or renamed between
// the two stats, unless the earlier one was racy.
type Stamp struct {
	Dev, Ino uint64 // 0 where the platform does not say (Windows, plan9, js)
	Mtime    int64  // modification time, ns since the Unix epoch
	Ctime    int64  // change time (Unix), creation time (Windows), ns; 0 where unknown
	Size     int64
}

// SameDir reports whether s and o are stamps of the same directory (not one
// removed and made again under the name): the same device and inode where
// the platform has them, else the same creation time (Windows); where
// neither is known, it reports true.
func (s Stamp) SameDir(o Stamp) bool {
	if s.Ino != 0 || o.Ino != 0 {
		return s.Dev == o.Dev && s.Ino == o.Ino
	}
	return s.Ctime == o.Ctime
}

// Entry is one entry of a directory's listing: its name and its type, as
// the listing gives it (a symbolic link is ModeSymlink, never followed).
type Entry struct {
	Name string
	Type fs.FileMode
}

func entriesOf(des []fs.DirEntry) []Entry {
	es := make([]Entry, len(des))
	for i, de := range des {
		es[i] = Entry{Name: de.Name(), Type: de.Type()}
	}
	return es
}
