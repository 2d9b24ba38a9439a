package fsys

import (
	"math/rand/v2"
	"time"
)

// BusyTimeout is how long RetryBusy keeps trying on Windows.
const BusyTimeout = DefaultReplaceTimeout

// RetryBusy calls op until it returns anything but a sharing error, for at
// most BusyTimeout: on Windows another process that holds a file or a
// directory open without FILE_SHARE_DELETE (Go's os.Open, Python's open(),
// jobstore's own readers of a job directory for the instant they read it,
// a virus scanner) makes a rename or a delete of it, or of a directory
// above it, fail with a sharing violation or access denied until it
// closes. The pauses are short and jittered, as for a replace (moveFile). A
// genuine access denial costs the whole timeout before it is returned.
func RetryBusy(op func() error) error {
	deadline := time.Now().Add(BusyTimeout)
	delay := time.Millisecond
	for {
		err := op()
		if err == nil || !isSharingError(err) || !time.Now().Before(deadline) {
			return err
		}
		time.Sleep(delay + rand.N(delay))
		delay = min(2*delay, replaceRetryDelay)
	}
}

// IsBusy reports an error RetryBusy retries: another process holds the
// file or directory open in a way that forbids the operation.
func IsBusy(err error) bool { return isSharingError(err) }
