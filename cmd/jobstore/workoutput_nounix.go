//go:build !unix

package main

import (
	"fmt"
	"os"
	"path/filepath"
)

// openOutput opens name in the job directory dir for appending, creating
// it. A name that is a link or not a regular file is refused (looked at
// just before the open).
func openOutput(dir, name string) (*os.File, error) {
	path := filepath.Join(dir, name)
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
}
