//go:build !linux

package fsevents

// Local reports whether dir is on a filesystem whose every change gives an
// event to a watch on this machine. Off Linux it is not determined, so the
// answer is false: a watcher polls as well.
func Local(dir string) bool { return false }
