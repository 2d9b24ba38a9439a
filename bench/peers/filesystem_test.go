package main

import "testing"

const mountinfoSample = `22 27 0:21 / /proc rw,relatime - proc proc rw
27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard
28 27 0:25 / /mnt/tools ro,nosuid - tmpfs tools ro,size=4k
45 27 0:40 / /tmp/with\040space rw,nosuid shared:5 - fuse /tmp/back\040ing rw,user_id=0
47 27 7:0 / /mnt/zj rw,relatime - ext4 /dev/loop0 rw
48 47 7:1 / /mnt/zj rw,relatime - xfs /dev/loop1 rw
not a mount line
`

func TestMountOf_TheDeepestMountHoldingThePath(t *testing.T) {
	ms := parseMountinfo(mountinfoSample)
	if len(ms) != 6 {
		t.Fatalf("parsed %d mounts, want 6: %+v", len(ms), ms)
	}
	for _, tc := range []struct {
		path, point, fstype, source string
	}{
		{"/work/pp", "/", "ext4", "/dev/vda"},
		{"/", "/", "ext4", "/dev/vda"},
		{"/mnt/zjx/a", "/", "ext4", "/dev/vda"},     // a sibling that shares a prefix is not below /mnt/zj
		{"/mnt/zj", "/mnt/zj", "xfs", "/dev/loop1"}, // the last mounted of two on one point
		{"/mnt/zj/pp/root", "/mnt/zj", "xfs", "/dev/loop1"},
		{"/tmp/with space/x", "/tmp/with space", "fuse", "/tmp/back ing"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			m, ok := mountOf(ms, tc.path)
			if want := (mount{point: tc.point, fstype: tc.fstype, source: tc.source}); !ok || m != want {
				t.Errorf("mountOf(%q) = %+v, %v; want %+v", tc.path, m, ok, want)
			}
		})
	}
	if m, ok := mountOf(parseMountinfo("27 1 254:0 / /mnt rw - ext4 /dev/vda rw\n"), "/work"); ok {
		t.Errorf("mountOf(/work) = %+v; want none: no mount holds /work", m)
	}
}

func TestDescribeMount_SaysWhetherAnExt4DiskHasAJournal(t *testing.T) {
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
		m      mount
		exists func(string) bool
		want   string
	}{
		{"journal", mount{"/", "ext4", "/dev/vda"}, exists("/proc/fs/jbd2/vda-8", "/sys/fs/ext4/vda"), "ext4 on /dev/vda, with a journal"},
		{"no journal", mount{"/", "ext4", "/dev/vda"}, exists("/sys/fs/ext4/vda", "/proc/fs/jbd2/loop0-8"), "ext4 on /dev/vda, no journal"},
		{"unknown", mount{"/", "ext4", "/dev/vda"}, exists(), "ext4 on /dev/vda"},
		{"not ext4", mount{"/", "xfs", "/dev/sdb1"}, exists("/proc/fs/jbd2/sdb1-8"), "xfs on /dev/sdb1"},
		{"not a device", mount{"/", "ext4", "backing"}, exists("/proc/fs/jbd2/backing-8"), "ext4 on backing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := describeMount(tc.m, tc.exists); got != tc.want {
				t.Errorf("describeMount(%+v) = %q, want %q", tc.m, got, tc.want)
			}
		})
	}
}
