//go:build !windows

package fsys

import "time"

// BusyTimeout is 0 outside Windows: RetryBusy never retries.
const BusyTimeout time.Duration = 0

// RetryBusy calls op once: outside Windows an open file never stops a
// rename or a delete.
func RetryBusy(op func() error) error { return op() }

// IsBusy is false outside Windows (see RetryBusy).
func IsBusy(error) bool { return false }
