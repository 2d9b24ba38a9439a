//go:build !linux

package jobstore_test

import "testing"

// openFiles is -1 where the test does not count descriptors.
func openFiles(*testing.T) int { return -1 }

// settledOpenFiles is -1 where the test does not count descriptors.
func settledOpenFiles(*testing.T) int { return -1 }
