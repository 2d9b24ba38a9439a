package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestFileSystemOf_NamesWhatHoldsADirectory(t *testing.T) {
	dir := t.TempDir()
	got := fileSystemOf(dir)
	if got == "" {
		t.Fatalf("fileSystemOf(%q) = \"\", want the file system named", dir)
	}
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		t.Fatal(err)
	}
	dn := uint64(st.Dev)
	if uevent, err := os.ReadFile(fmt.Sprintf("/sys/dev/block/%d:%d/uevent", unix.Major(dn), unix.Minor(dn))); err == nil {
		if dev := deviceName(string(uevent)); dev != "" && !strings.Contains(got, " on /dev/"+dev) {
			t.Errorf("fileSystemOf(%q) = %q, want it to name the device %s", dir, got, dev)
		}
	}
	if got := fileSystemOf(filepath.Join(dir, "missing")); got != "" {
		t.Errorf("fileSystemOf of a missing directory = %q, want \"\"", got)
	}
}
