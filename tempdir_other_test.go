//go:build !windows

package jobstore_test

import "testing"

func platformTempDir(t testing.TB) string { return t.TempDir() }

// underWine reports whether the tests run under Wine (never, off Windows).
func underWine() bool { return false }
