package main

import (
	"fmt"
	"strings"
)

// Magic numbers of statfs(2)'s f_type for the file systems a run is likely
// to meet (linux/magic.h).
const (
	magicExt   = 0xEF53 // ext2, ext3 and ext4 share it
	magicXFS   = 0x58465342
	magicBtrfs = 0x9123683E
	magicTmpfs = 0x01021994
	magicNFS   = 0x6969
	magicFUSE  = 0x65735546
	magicOver  = 0x794C7630
	magicZFS   = 0x2FC12FC1
)

// fsName names the file system of a magic number, "" for one not listed;
// ext is told apart by describeFS.
func fsName(magic int64) string {
	switch magic {
	case magicXFS:
		return "xfs"
	case magicBtrfs:
		return "btrfs"
	case magicTmpfs:
		return "tmpfs"
	case magicNFS:
		return "nfs"
	case magicFUSE:
		return "fuse"
	case magicOver:
		return "overlay"
	case magicZFS:
		return "zfs"
	}
	return ""
}

// describeFS says what file system a directory is on, for the line under
// the disk's rates: magic is statfs's f_type, dev the name of the block
// device under it ("" for none), and exists answers whether a path exists.
// For ext4 it says whether the file system has a journal: Linux lists an
// ext4 device under /sys/fs/ext4, and a journaled one under /proc/fs/jbd2
// as "<device>-8". ext4 without a journal skips, at each inode it
// allocates, the inodes freed in the last minute or more, so that a create
// costs more CPU the more was removed before (docs/benchmarks.md).
func describeFS(magic int64, dev string, exists func(string) bool) string {
	on := ""
	if dev != "" {
		on = " on /dev/" + dev
	}
	switch name := fsName(magic); {
	case magic == magicExt && dev != "" && exists("/sys/fs/ext4/"+dev):
		if exists("/proc/fs/jbd2/" + dev + "-8") {
			return "ext4" + on + ", with a journal"
		}
		return "ext4" + on + ", no journal"
	case magic == magicExt:
		return "ext2, ext3 or ext4" + on
	case name != "":
		return name + on
	}
	return fmt.Sprintf("file system type %#x", magic) + on
}

// deviceName is the DEVNAME of a block device's uevent text (as
// /sys/dev/block/MAJOR:MINOR/uevent reads), "" if it has none.
func deviceName(uevent string) string {
	for line := range strings.SplitSeq(uevent, "\n") {
		if name, ok := strings.CutPrefix(line, "DEVNAME="); ok {
			return strings.TrimSpace(name)
		}
	}
	return ""
}
