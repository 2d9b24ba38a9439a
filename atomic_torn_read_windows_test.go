package jobstore_test

import (
	"errors"

	"golang.org/x/sys/windows"
)

// isSharingError: opening a file that MoveFileEx is replacing fails for a
// moment with one of these (ReadStatus retries them).
func isSharingError(err error) bool {
	return errors.Is(err, windows.ERROR_SHARING_VIOLATION) || errors.Is(err, windows.ERROR_ACCESS_DENIED)
}
