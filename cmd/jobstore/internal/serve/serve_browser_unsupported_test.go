//go:build !linux

package serve

// stopBrowser ends the browser tests' shared browser: they run on Linux
// only (Debian's chromium).
func stopBrowser() {}
