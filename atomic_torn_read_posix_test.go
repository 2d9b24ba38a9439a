//go:build !windows

package jobstore_test

// isSharingError: only Windows refuses to open a file while it is replaced.
func isSharingError(error) bool { return false }
