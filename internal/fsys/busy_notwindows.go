//go:build !windows

package fsys

// RetryBusy calls op once: outside Windows an open file never stops a
// rename or a delete.
func RetryBusy(op func() error) error { return op() }

// IsBusy is false outside Windows (see RetryBusy).
func IsBusy(error) bool { return false }
