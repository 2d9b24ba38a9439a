//go:build !linux

package main

// fileSystemOf is "": only Linux's /proc is read to say what holds dir.
func fileSystemOf(string) string { return "" }
