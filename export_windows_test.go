package jobstore

import (
	"os"
	"path/filepath"
)

// ReplaceBudget lets the Windows tests hold a file open for longer than a
// replace waits by default, without copying the constant.
const ReplaceBudget = DefaultReplaceTimeout

// POSIXRenameSupported reports whether the POSIX-semantics rename works in
// dir (it does on NTFS, Windows 10 1607 and later; not under Wine 8), by
// renaming a scratch file over another.
func POSIXRenameSupported(dir string) (bool, error) {
	from, to := filepath.Join(dir, ".probe-from"), filepath.Join(dir, ".probe-to")
	for _, p := range []string{from, to} {
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			return false, err
		}
	}
	defer os.Remove(from)
	defer os.Remove(to)
	err := renamePOSIX(from, filepath.Base(to))
	if unsupportedRename(err) {
		return false, nil
	}
	return err == nil, err
}
