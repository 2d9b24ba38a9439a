//go:build !unix && !windows

package dirstamp

import "os"

// fileStamp is a stamp from a path's modification time and size alone:
// these platforms say no more.
func fileStamp(fi os.FileInfo) Stamp { return Stamp{Mtime: fi.ModTime().UnixNano(), Size: fi.Size()} }
