package jobstore

import "os"

// isTransientReadError: while MoveFileEx replaces a file, opening it fails
// with a sharing violation or access denied for a moment.
func isTransientReadError(err error) bool {
	return isSharingError(err)
}

func openRecord(path string) (recordFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err // not a nil *os.File in a non-nil interface
	}
	return f, nil
}
