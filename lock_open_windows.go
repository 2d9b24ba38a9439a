package jobstore

import (
	"io/fs"
	"os"

	"golang.org/x/sys/windows"
)

// openLock opens or creates job.lock without following a link at its name
// (FILE_FLAG_OPEN_REPARSE_POINT); anything but a regular file is refused.
func (d dirHandle) openLock(name string) (*os.File, error) {
	f, err := openNoFollow(d.join(name), windows.GENERIC_READ|windows.GENERIC_WRITE,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE, windows.OPEN_ALWAYS)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, &fs.PathError{Op: "stat", Path: f.Name(), Err: err}
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, &notRegularError{fi.Mode()}
	}
	return f, nil
}
