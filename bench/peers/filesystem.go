package main

import (
	"path/filepath"
	"strconv"
	"strings"
)

// mount is one line of /proc/self/mountinfo: where a file system is
// mounted, its type and its source (a device, for a disk).
type mount struct {
	point, fstype, source string
}

// parseMountinfo reads the mounts of a /proc/self/mountinfo text, in its
// order; lines it cannot read are skipped.
func parseMountinfo(text string) []mount {
	var ms []mount
	for line := range strings.SplitSeq(text, "\n") {
		fields := strings.Fields(line)
		sep := -1
		for i, f := range fields {
			if f == "-" && i >= 6 {
				sep = i
				break
			}
		}
		if sep < 0 || len(fields) < sep+3 {
			continue
		}
		ms = append(ms, mount{point: unescapeMount(fields[4]), fstype: fields[sep+1], source: unescapeMount(fields[sep+2])})
	}
	return ms
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// mountOf is the mount that holds path (absolute, links resolved): the one
// with the longest mount point that is path or a parent of it, the last
// mounted of those when several share that point.
func mountOf(ms []mount, path string) (mount, bool) {
	var best mount
	found := false
	for _, m := range ms {
		if !within(path, m.point) {
			continue
		}
		if !found || len(m.point) >= len(best.point) {
			best, found = m, true
		}
	}
	return best, found
}

// within reports whether path is dir or below it.
func within(path, dir string) bool {
	if dir == "/" {
		return strings.HasPrefix(path, "/")
	}
	return path == dir || strings.HasPrefix(path, dir+"/")
}

// describeMount says what m is, for the line under the disk's rates: its
// type and source, and for ext4 whether it has a journal (Linux lists a
// journaled ext4 device under /proc/fs/jbd2 as "<device>-8"; exists answers
// whether a path exists). ext4 without a journal skips, at each inode it
// allocates, the inodes freed in the last minute or more, so that creates
// cost more CPU the more was removed before (docs/benchmarks.md).
func describeMount(m mount, exists func(string) bool) string {
	s := m.fstype + " on " + m.source
	if m.fstype != "ext4" || !strings.HasPrefix(m.source, "/dev/") {
		return s
	}
	dev := filepath.Base(m.source)
	switch {
	case exists("/proc/fs/jbd2/" + dev + "-8"):
		return s + ", with a journal"
	case exists("/sys/fs/ext4/" + dev):
		return s + ", no journal"
	}
	return s
}
