package jobstore

import (
	"os"
	"path/filepath"

	"github.com/axqua/jobstore/internal/fsys"
)

// ReplaceBudget lets the Windows tests hold a file open for longer than a
// replace waits by default, without copying the constant.
const ReplaceBudget = DefaultReplaceTimeout

// POSIXRenameSupported reports whether a replace succeeds at once over a
// file that one of our readers holds open (sharing delete), which only the
// POSIX-semantics rename can do (NTFS, Windows 10 1607 and later; not Wine
// 8): a probe with scratch files in dir.
func POSIXRenameSupported(dir string) (bool, error) {
	tmp, target := ".probe-from", ".probe-to"
	for _, name := range []string{tmp, target} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			return false, err
		}
	}
	defer os.Remove(filepath.Join(dir, tmp))
	defer os.Remove(filepath.Join(dir, target))
	d, err := fsys.Open(dir, false)
	if err != nil {
		return false, err
	}
	defer d.Close()
	r, err := d.OpenRecord(target)
	if err != nil {
		return false, err
	}
	defer r.Close()
	return d.Replace(tmp, target, true, 0) == nil, nil
}
