//go:build !windows

package main

import "testing"

func tempRoot(t *testing.T) string { t.Helper(); return t.TempDir() }
