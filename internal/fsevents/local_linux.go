package fsevents

import "golang.org/x/sys/unix"

// Filesystems whose changes are all made through this kernel, so that a
// watch hears every one. Not among them: NFS, SMB, Ceph, 9P, AFS, OCFS2 and
// GFS2 (other hosts write without events), FUSE (the server writes without
// them: sshfs, GlusterFS, bindfs) and overlayfs (changes to a lower layer
// give none), nor any type not named here.
const (
	zfsSuperMagic = 0x2fc12fc1 // not in x/sys
	jfsSuperMagic = 0x3153464a
)

// Local reports whether dir is on a filesystem whose every change gives
// an event to a watch on this machine: a local disk or memory filesystem
// of a known type (ext2/3/4, xfs, btrfs, tmpfs, ramfs, f2fs, zfs, bcachefs,
// jfs, reiserfs, nilfs2). False for network, cluster, FUSE and overlay
// filesystems, for unknown types, and when dir cannot be looked at. A
// watcher may leave to events alone what is watched on such a filesystem.
func Local(dir string) bool {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return false
	}
	switch uint32(st.Type) {
	case unix.EXT4_SUPER_MAGIC, unix.XFS_SUPER_MAGIC, unix.BTRFS_SUPER_MAGIC, unix.TMPFS_MAGIC,
		unix.RAMFS_MAGIC, unix.F2FS_SUPER_MAGIC, zfsSuperMagic, unix.BCACHEFS_SUPER_MAGIC,
		jfsSuperMagic, unix.REISERFS_SUPER_MAGIC, unix.NILFS_SUPER_MAGIC:
		return true
	}
	return false
}
