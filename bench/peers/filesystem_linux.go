package main

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// fileSystemOf describes the file system that holds dir (describeFS):
// its type from statfs(2), the block device from dir's st_dev through
// /sys/dev/block; "" when dir cannot be stated.
func fileSystemOf(dir string) string {
	var sf unix.Statfs_t
	var st unix.Stat_t
	if unix.Statfs(dir, &sf) != nil || unix.Stat(dir, &st) != nil {
		return ""
	}
	dev := ""
	dn := uint64(st.Dev) // a uint32 on some architectures
	uevent, err := os.ReadFile(fmt.Sprintf("/sys/dev/block/%d:%d/uevent", unix.Major(dn), unix.Minor(dn)))
	if err == nil {
		dev = deviceName(string(uevent))
	}
	return describeFS(int64(sf.Type), dev, func(p string) bool {
		_, err := os.Stat(p)
		return err == nil
	})
}
