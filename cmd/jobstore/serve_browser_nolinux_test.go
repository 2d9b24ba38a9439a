//go:build !linux

package main

// stopBrowser ends the browser tests' shared browser: they run on Linux
// only (Debian's chromium).
func stopBrowser() {}
