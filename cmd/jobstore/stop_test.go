package main

import (
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// A stopped watcher's exit status is the one a shell reports for a process
// the signal ended, and main knows the signal back from it; no other status
// is taken for a stop.
func TestStopped_ExitStatusIsTheSignals(t *testing.T) {
	require.Equal(t, 130, exitStatusOf(&stopped{os.Interrupt}))
	require.Equal(t, 143, exitStatusOf(&stopped{syscall.SIGTERM}))
	require.Equal(t, os.Interrupt, stopSignalOf(130))
	require.Equal(t, os.Signal(syscall.SIGTERM), stopSignalOf(143))
	for _, code := range []int{exitOK, exitUnsuccessful, exitUsage, exitRuntime, 128, 129, 137} {
		require.Nil(t, stopSignalOf(code), "%d", code)
	}
	buf, errBuf := new(strings.Builder), new(strings.Builder)
	e := &env{stdout: buf, stderr: errBuf}
	require.Equal(t, 130, e.exit(&stopped{os.Interrupt}))
	require.Empty(t, errBuf.String(), "a stop is no error: nothing on stderr")
}
