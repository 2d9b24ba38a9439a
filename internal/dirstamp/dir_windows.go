package dirstamp

import (
	"os"
	"syscall"
)

// fileStamp is a stamp from a path's attributes: no device or inode, the
// creation time in Ctime, so that a file or directory made again under the
// same name differs (SameDir).
func fileStamp(fi os.FileInfo) Stamp {
	s := Stamp{Mtime: fi.ModTime().UnixNano(), Size: fi.Size()}
	if a, ok := fi.Sys().(*syscall.Win32FileAttributeData); ok {
		s.Ctime = a.CreationTime.Nanoseconds()
	}
	return s
}
