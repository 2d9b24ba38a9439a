//go:build !linux

package main

// fileSystemOf is "": what holds dir is named from Linux's statfs types,
// /sys and /proc alone, and elsewhere the file system goes unnamed.
func fileSystemOf(string) string { return "" }
