//go:build !unix && !windows

package jobstore

import "errors"

// renameDirNoReplace: no file primitives here (see atomic_other.go).
func renameDirNoReplace(from, to string) error { return errors.ErrUnsupported }

// isDirNotEmpty: nothing is renamed here.
func isDirNotEmpty(error) bool { return false }

// isNotDir: no path runs through a file here that the primitives would see.
func isNotDir(error) bool { return false }
