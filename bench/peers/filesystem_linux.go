package main

import (
	"os"
	"path/filepath"
)

// fileSystemOf describes the file system that holds dir (describeMount);
// "" when /proc does not say.
func fileSystemOf(dir string) string {
	abs, err := filepath.Abs(dir)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return ""
	}
	text, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return ""
	}
	m, ok := mountOf(parseMountinfo(string(text)), abs)
	if !ok {
		return ""
	}
	return describeMount(m, func(p string) bool {
		_, err := os.Stat(p)
		return err == nil
	})
}
