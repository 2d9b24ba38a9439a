//go:build !windows

package testdir

import "testing"

// UnderWine reports whether this is a Windows binary running under Wine:
// never, off Windows.
func UnderWine() bool { return false }

func wineTempDir(t testing.TB) string { panic("testdir: Wine on a non-Windows build") }
