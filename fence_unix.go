//go:build unix

package jobstore

import (
	"os"
	"path/filepath"
)

// replaceFileVia is replaceFile with the temp file created in tempDir (same
// filesystem as path) and renamed by path: the rename resolves tempDir's
// name afresh, so renaming tempDir away makes it fail. Never a descriptor of
// tempDir (renameat with a directory fd would still reach it after a fence).
func replaceFileVia(tempDir, path string, data []byte, o writeOptions) error {
	pf, err := writeTemp(filepath.Join(tempDir, filepath.Base(path)), data, o.perm)
	if err != nil {
		return err
	}
	published := false
	defer func() {
		if !published {
			_ = pf.Cleanup()
		}
	}()
	if !o.noSync {
		if err := pf.Sync(); err != nil {
			return stepError("fsync", pf.Name(), err, "the disk did not confirm the temp file (not retried: a second fsync can claim success after losing the data)", "")
		}
	}
	if err := pf.File.Close(); err != nil {
		return stepError("close", pf.Name(), err, "cannot close the temp file", "")
	}
	if err := os.Rename(pf.Name(), path); err != nil {
		return stepError("rename", path, unwrapLink(err), "cannot replace the record with the temp file", "")
	}
	published = true
	if o.noSync {
		return nil
	}
	return syncDir(filepath.Dir(path), path)
}

// syncClaim makes a new or renamed attempt directory's entry durable.
func syncClaim(dir JobDir, entry string) error { return syncDir(string(dir), entry) }

// renameDirNoReplace renames a directory unless the target exists: with
// RENAME_NOREPLACE where the filesystem has it, else rename(2), which
// replaces only an empty directory (a fenced attempt's directory is empty
// only if its claimant died before writing owner.json).
func renameDirNoReplace(from, to string) error {
	moved, err := renameNoReplace(from, to)
	if moved || err != nil {
		return err
	}
	return os.Rename(from, to)
}
