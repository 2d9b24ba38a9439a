package jobstore

import "os"

// isTransientReadError: while MoveFileEx replaces a file, opening it fails
// with a sharing violation or access denied for a moment.
func isTransientReadError(err error) bool {
	return isSharingError(err)
}

func openRecord(path string) (*os.File, error) { return os.Open(path) }
