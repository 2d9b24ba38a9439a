package jobstore

import (
	"os"
	"path/filepath"

	"golang.org/x/sys/windows"
)

// replaceFileVia is replaceFile with the temp file created in tempDir and
// moved by path, so that renaming tempDir away makes the move fail.
func replaceFileVia(tempDir, path string, data []byte, o writeOptions) error {
	o.perm |= 0o200 // see replaceFile
	tmp, err := writeTemp(filepath.Join(tempDir, filepath.Base(path)), data, o)
	if err != nil {
		return err
	}
	flags := uint32(windows.MOVEFILE_REPLACE_EXISTING)
	if !o.noSync {
		flags |= windows.MOVEFILE_WRITE_THROUGH
	}
	if err := moveFile(tmp, path, flags); err != nil {
		_ = removeTemp(tmp)
		return stepError("rename", path, err, "cannot replace the record with the temp file", "")
	}
	return nil
}

// syncClaim does nothing: Windows cannot fsync a directory; NTFS journals
// the entry.
func syncClaim(JobDir, string) error { return nil }

// renameDirNoReplace is MoveFileEx without MOVEFILE_REPLACE_EXISTING: it
// fails if the target exists (os.Rename would ask to replace it).
func renameDirNoReplace(from, to string) error {
	f, err := windows.UTF16PtrFromString(from)
	if err != nil {
		return err
	}
	t, err := windows.UTF16PtrFromString(to)
	if err != nil {
		return err
	}
	if err := windows.MoveFileEx(f, t, 0); err != nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
	return nil
}
