package jobstore

import (
	"testing"
	"time"
)

func TestAttemptDir(t *testing.T) {
	for _, tc := range []struct {
		name   string
		n      uint64
		fenced bool
		ok     bool
	}{
		{".run-1", 1, false, true},
		{".fenced-42", 42, true, true},
		{".run-0", 0, false, false},
		{".run-01", 0, false, false},
		{".run-", 0, false, false},
		{".run-1x", 0, false, false},
		{".run-99999999999999999999", 0, false, false},
		{".status.json123", 0, false, false},
		{"run-1", 0, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, fenced, ok := attemptDir(tc.name)
			if n != tc.n || fenced != tc.fenced || ok != tc.ok {
				t.Fatalf("got %d %v %v, want %d %v %v", n, fenced, ok, tc.n, tc.fenced, tc.ok)
			}
			if IsTempName(tc.name) && ok {
				t.Fatalf("%s is both an attempt directory and a temp name", tc.name)
			}
		})
	}
}

// The default lease must satisfy the documented bound L > D against NFS's
// default directory attribute cache (acdirmax 60 s).
func TestDefaultLease_ExceedsNFSDirectoryCache(t *testing.T) {
	const acdirmax = 60 * time.Second
	if defaultLease <= acdirmax {
		t.Fatalf("default lease %v does not exceed acdirmax %v", defaultLease, acdirmax)
	}
}
