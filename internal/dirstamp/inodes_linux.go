package dirstamp

import (
	"bytes"
	"encoding/binary"
	"os"

	"golang.org/x/sys/unix"
)

// Inodes returns the entries of the directory that are directories or of
// unknown type (never ".", ".."), each with the inode number its listing
// gives (d_ino): one listing, no stat of each. An entry removed and made
// again under its name has another inode, unless the filesystem reused the
// freed one for it.
func (d *Dir) Inodes() (map[string]uint64, error) {
	if err := ignoringEINTR(func() error { _, err := unix.Seek(d.fd, 0, 0); return err }); err != nil {
		return nil, &os.PathError{Op: "seek", Path: d.path, Err: err}
	}
	m := map[string]uint64{}
	buf := make([]byte, 32<<10)
	for {
		var n int
		if err := ignoringEINTR(func() (err error) { n, err = unix.Getdents(d.fd, buf); return err }); err != nil {
			return nil, &os.PathError{Op: "getdents", Path: d.path, Err: err}
		}
		if n <= 0 {
			return m, nil
		}
		// struct linux_dirent64: d_ino u64, d_off s64, d_reclen u16,
		// d_type u8, d_name NUL-terminated.
		for off := 0; off+19 <= n; {
			rec := buf[off:n]
			reclen := int(binary.NativeEndian.Uint16(rec[16:18]))
			if reclen < 19 || reclen > len(rec) {
				break
			}
			ino, typ := binary.NativeEndian.Uint64(rec[0:8]), rec[18]
			name := rec[19:reclen]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			if s := string(name); s != "." && s != ".." && (typ == unix.DT_DIR || typ == unix.DT_UNKNOWN) {
				m[s] = ino
			}
			off += reclen
		}
	}
}
