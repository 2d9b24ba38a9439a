package clitest

import (
	"bytes"
	"sync"
	"testing"
	"time"
)

// Timeout bounds a wait of a test for what it expects; reached only when
// something hangs.
const Timeout = 60 * time.Second

// SyncBuffer is a bytes.Buffer safe for a writer and a reader.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// WaitUntil polls cond until it holds, failing the test after Timeout
// (a hang guard, not a speed limit).
func WaitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(Timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", Timeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
