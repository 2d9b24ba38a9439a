//go:build !linux

package main

// fileSystemOf is "": only Linux's /proc is read to say what holds dir,
// and elsewhere the file system goes unnamed.
func fileSystemOf(string) string { return "" }
