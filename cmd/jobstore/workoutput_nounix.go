//go:build !unix

package main

import (
	"fmt"
	"os"
	"path/filepath"
)

// openOutput opens name in the job directory dir for reading and writing
// (not appending: cappedLog keeps the offset, and cuts the file's start),
// creating it. A name that is a link or not a regular file is refused (looked at
// just before the open).
func openOutput(dir, name string) (*os.File, error) {
	path := filepath.Join(dir, name)
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
}
