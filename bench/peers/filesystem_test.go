package main

import "testing"

func TestDescribeFS_SaysWhetherAnExt4DiskHasAJournal(t *testing.T) {
	exists := func(paths ...string) func(string) bool {
		return func(p string) bool {
			for _, q := range paths {
				if p == q {
					return true
				}
			}
			return false
		}
	}
	for _, tc := range []struct {
		name   string
		magic  int64
		dev    string
		exists func(string) bool
		want   string
	}{
		{"journal", magicExt, "vda", exists("/sys/fs/ext4/vda", "/proc/fs/jbd2/vda-8"), "ext4 on /dev/vda, with a journal"},
		{"no journal", magicExt, "vda", exists("/sys/fs/ext4/vda", "/proc/fs/jbd2/loop0-8"), "ext4 on /dev/vda, no journal"},
		{"ext not mounted as ext4", magicExt, "sdb1", exists("/proc/fs/jbd2/sdb1-8"), "ext2, ext3 or ext4 on /dev/sdb1"},
		{"ext without a device", magicExt, "", exists("/sys/fs/ext4/", "/proc/fs/jbd2/-8"), "ext2, ext3 or ext4"},
		{"xfs", magicXFS, "nvme0n1p2", exists("/sys/fs/ext4/nvme0n1p2"), "xfs on /dev/nvme0n1p2"},
		{"tmpfs", magicTmpfs, "", exists(), "tmpfs"},
		{"unknown", 0x1234, "sdc", exists(), "file system type 0x1234 on /dev/sdc"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := describeFS(tc.magic, tc.dev, tc.exists); got != tc.want {
				t.Errorf("describeFS(%#x, %q) = %q, want %q", tc.magic, tc.dev, got, tc.want)
			}
		})
	}
}

func TestDeviceName_ReadsDevnameFromAUevent(t *testing.T) {
	for _, tc := range []struct{ uevent, want string }{
		{"MAJOR=254\nMINOR=0\nDEVNAME=vda\nDEVTYPE=disk\nDISKSEQ=9\n", "vda"},
		{"MAJOR=7\nMINOR=0\nDEVNAME=loop0\n", "loop0"},
		{"MAJOR=0\nMINOR=21\n", ""},
		{"", ""},
	} {
		if got := deviceName(tc.uevent); got != tc.want {
			t.Errorf("deviceName(%q) = %q, want %q", tc.uevent, got, tc.want)
		}
	}
}
