package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/internal/testdir"
	"github.com/stretchr/testify/require"
)

// openPTY opens a pseudo-terminal of cols columns: the controller end (what
// a terminal emulator reads) and the terminal end (the program's stdout).
func openPTY(t *testing.T, cols int) (controller, tty *os.File) {
	t.Helper()
	controller, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { controller.Close() })
	fd := int(controller.Fd())
	require.NoError(t, unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0))
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	require.NoError(t, err)
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	require.NoError(t, err)
	t.Cleanup(func() { tty.Close() })
	require.NoError(t, unix.IoctlSetWinsize(int(tty.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 24, Col: uint16(cols)}))
	return controller, tty
}

// The binary on a real (pseudo) terminal of 20, 50 and 80 columns: it
// finds the width itself, and no row it draws reaches the last column.
func TestWatch_OnAPseudoTerminalNeverWraps(t *testing.T) {
	for _, cols := range []int{20, 50, 80} {
		t.Run(fmt.Sprint(cols), func(t *testing.T) {
			controller, tty := openPTY(t, cols)
			dir := submit(t, testdir.New(t), "j")
			run, err := jobstore.Start(dir)
			require.NoError(t, err)
			defer run.Close()
			require.NoError(t, run.Progress(0.4, "rendering frame 12 of 30 with a message far longer than any narrow pane"))

			ctx, cancel := context.WithTimeout(context.Background(), cliTimeout)
			defer cancel()
			cmd := jobstoreCmd(ctx, nil, "watch", string(dir), "--interval", watchPoll.String())
			cmd.Stdout, cmd.Stderr = tty, tty
			require.NoError(t, cmd.Start())
			tty.Close() // the child holds its own copy; EOF on the controller when it exits

			chunks := make(chan []byte, 100)
			go func() { // until EIO: the terminal end is closed when the child exits
				for {
					b := make([]byte, 4096)
					n, err := controller.Read(b)
					if n > 0 {
						chunks <- b[:n]
					}
					if err != nil {
						close(chunks)
						return
					}
				}
			}()
			var screen bytes.Buffer
			// The long message must have been drawn before the job moves on.
			deadline := time.After(lineTimeout)
			for !strings.Contains(screen.String(), "running") {
				select {
				case b := <-chunks:
					screen.Write(b)
				case <-deadline:
					t.Fatalf("watch drew nothing within %v: %q", lineTimeout, screen.String())
				}
			}

			require.NoError(t, run.Progress(0.5, "halfway"))
			require.NoError(t, run.Finish(jobstore.Outcome{State: jobstore.Succeeded}))
			require.NoError(t, cmd.Wait())
			for b := range chunks {
				screen.Write(b)
			}

			out := screen.String()
			require.Contains(t, out, "job j succeeded")
			rows := 0
			for _, row := range screenRows(out) {
				if strings.HasPrefix(row, "job j ") {
					continue // the last line is printed, not redrawn
				}
				rows++
				require.Less(t, cells(row), cols, "row %q on a %d-column terminal", row, cols)
				require.Regexp(t, `^(running|succeeded) `, row)
			}
			require.Positive(t, rows, "watch drew nothing:\n%q", out)
		})
	}
}
