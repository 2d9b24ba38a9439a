//go:build unix

package jobstore

import (
	"errors"
	"io"
	"io/fs"
	"syscall"
	"time"
)

// isTransientReadError: NFS reports ESTALE when a file was replaced under a
// cached handle; reopening finds the new file.
func isTransientReadError(err error) bool {
	return errors.Is(err, syscall.ESTALE)
}

// openRecord opens path for reading with plain system calls: open, fstat,
// read until EOF, close. os.Open would add four fcntl calls and a failed
// epoll registration per regular file on Linux (and an *os.File with its
// cleanup); List reads two records per job.
func openRecord(path string) (recordFile, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err == nil {
			return rawFile(fd), nil
		}
		if err != syscall.EINTR {
			return nil, &fs.PathError{Op: "open", Path: path, Err: err}
		}
	}
}

type rawFile int

func (f rawFile) Read(b []byte) (int, error) {
	for {
		n, err := syscall.Read(int(f), b)
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return 0, err
		case n == 0 && len(b) > 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

func (f rawFile) Stat() (fs.FileInfo, error) {
	var st syscall.Stat_t
	for {
		err := syscall.Fstat(int(f), &st)
		if err == nil {
			return rawInfo{size: st.Size, dir: st.Mode&syscall.S_IFMT == syscall.S_IFDIR}, nil
		}
		if err != syscall.EINTR {
			return nil, err
		}
	}
}

func (f rawFile) Close() error { return syscall.Close(int(f)) }

// rawInfo is the part of a file's fs.FileInfo that readOnce uses: its size
// and whether it is a directory.
type rawInfo struct {
	size int64
	dir  bool
}

func (i rawInfo) Name() string       { return "" }
func (i rawInfo) Size() int64        { return i.size }
func (i rawInfo) IsDir() bool        { return i.dir }
func (i rawInfo) ModTime() time.Time { return time.Time{} }
func (i rawInfo) Sys() any           { return nil }
func (i rawInfo) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir
	}
	return 0
}
