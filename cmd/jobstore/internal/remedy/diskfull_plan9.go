package remedy

import "strings"

// isDiskFull reports whether err is the filesystem saying it has no room.
// Plan 9's errors are strings.
func isDiskFull(err error) bool { return strings.Contains(err.Error(), "file system full") }
