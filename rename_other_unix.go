//go:build unix && !linux

package jobstore

// renameNoReplace: no portable no-replace rename outside Linux; the caller
// uses link(2), which fails with EEXIST on a taken name just the same.
func renameNoReplace(dirfd int, from, to string) (moved bool, err error) { return false, nil }
