//go:build !windows

package jobstore_test

import "testing"

func platformTempDir(t testing.TB) string { return t.TempDir() }
