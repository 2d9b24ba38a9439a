package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/clitest"
	"github.com/axqua/jobstore/cmd/jobstore/internal/termtext"
	"github.com/axqua/jobstore/internal/prereq"
	"github.com/axqua/jobstore/internal/testdir"
	"github.com/stretchr/testify/require"
)

// openPTY opens a pseudo-terminal of cols columns: the controller end (what
// a terminal emulator reads) and the terminal end (the program's stdout).
func openPTY(t *testing.T, cols int) (controller, tty *os.File) {
	t.Helper()
	controller, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		prereq.Skip(t, "pty", fmt.Sprintf("no pseudo-terminals here: %v", err))
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
			dir := clitest.Submit(t, testdir.New(t), "j")
			run, err := jobstore.Start(dir, jobstore.WithProgressInterval(time.Hour)) // only Flush, Finish write progress
			require.NoError(t, err)
			defer run.Close()
			require.NoError(t, run.Progress(0.4, "rendering frame 12 of 30 with a message far longer than any narrow pane"))
			require.NoError(t, run.Flush()) // Progress is coalesced: the first status watch reads must carry the message

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
			rows, cut := 0, 0
			for _, row := range screenRows(out) {
				if strings.HasPrefix(row, "job j ") {
					continue // the last line is printed, not redrawn
				}
				rows++
				require.Less(t, termtext.Cells(row), cols, "row %q on a %d-column terminal", row, cols)
				require.Regexp(t, `^(running|succeeded) `, row)
				if strings.HasSuffix(strings.TrimRight(row, " "), "...") {
					cut++
				}
			}
			require.Positive(t, rows, "watch drew nothing:\n%q", out)
			require.Positive(t, cut, "the long message was never drawn (cut to the width):\n%q", out)
		})
	}
}

// ptyProc is the binary running on a pseudo-terminal; screen collects what
// it draws.
type ptyProc struct {
	cmd    *exec.Cmd
	chunks chan []byte
	screen bytes.Buffer
}

// startOnPTY runs the binary with args on a new pseudo-terminal of cols
// columns and 24 rows.
func startOnPTY(t *testing.T, cols int, args ...string) *ptyProc {
	t.Helper()
	controller, tty := openPTY(t, cols)
	ctx, cancel := context.WithTimeout(context.Background(), cliTimeout)
	t.Cleanup(cancel)
	p := &ptyProc{chunks: make(chan []byte, 1000)}
	p.cmd = jobstoreCmd(ctx, nil, args...)
	p.cmd.Stdout, p.cmd.Stderr = tty, tty
	require.NoError(t, p.cmd.Start())
	t.Cleanup(func() {
		cancel()
		_ = p.cmd.Wait()
	})
	tty.Close() // the child holds its own copy; EIO on the controller when it exits
	go func() {
		for {
			b := make([]byte, 4096)
			n, err := controller.Read(b)
			if n > 0 {
				p.chunks <- b[:n]
			}
			if err != nil {
				close(p.chunks)
				return
			}
		}
	}()
	return p
}

// waitFor reads the screen until it satisfies ok.
func (p *ptyProc) waitFor(t *testing.T, what string, ok func(screen string) bool) {
	t.Helper()
	deadline := time.After(lineTimeout)
	for !ok(p.screen.String()) {
		select {
		case b, open := <-p.chunks:
			if !open {
				t.Fatalf("the command ended before %s: %q", what, p.screen.String())
			}
			p.screen.Write(b)
		case <-deadline:
			t.Fatalf("not %s within %v: %q", what, lineTimeout, p.screen.String())
		}
	}
}

// wait waits for the command to end, reads the rest of the screen and
// returns its exit code.
func (p *ptyProc) wait(t *testing.T) int {
	t.Helper()
	err := p.cmd.Wait()
	for b := range p.chunks {
		p.screen.Write(b)
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	require.NoError(t, err)
	return 0
}

// redrawRE matches the start of a redraw of watch's line: '\r' not followed
// by '\n' (the terminal turns each '\n' into "\r\n").
var redrawRE = regexp.MustCompile("\r[^\n]")

// A runner that writes its status as fast as it can (a write per Progress
// call) for most of a second: the watch on a terminal redraws at most 10
// times a second however many statuses arrive, and still draws the last
// one. Redraws are at least redrawGap apart, bar the last, so over the
// whole run there can be at most elapsed/redrawGap + 2 of them; the bound
// below adds one more for the rounding.
func TestWatch_OnAPseudoTerminalRedrawsAtMostTenTimesASecond(t *testing.T) {
	dir := clitest.Submit(t, testdir.New(t), "j")
	run, err := jobstore.Start(dir, jobstore.WithProgressInterval(0))
	require.NoError(t, err)
	defer run.Close()

	began := time.Now()
	p := startOnPTY(t, 100, "watch", string(dir), "--interval", watchPoll.String())
	p.waitFor(t, "drawing the job running", func(s string) bool { return strings.Contains(s, "running") })

	// At least burst long and minWrites writes: a slow disk (or the race
	// detector) stretches the burst rather than thinning it.
	const burst, minWrites = 800 * time.Millisecond, 150
	calls := 0
	for start := time.Now(); calls < minWrites || time.Since(start) < burst; calls++ {
		require.NoError(t, run.Progress(float64(calls%1000)/1000, fmt.Sprintf("item %d", calls)))
	}
	require.NoError(t, run.Finish(jobstore.Outcome{State: jobstore.Succeeded, Message: "all items"}))
	require.Equal(t, exitOK, p.wait(t))
	elapsed := time.Since(began)

	out := p.screen.String()
	require.Contains(t, out, "job j succeeded")
	redraws := len(redrawRE.FindAllStringIndex(out, -1))
	bound := int(elapsed/redrawGap) + 3
	st, err := jobstore.ReadStatus(dir)
	require.NoError(t, err)
	t.Logf("%d status writes, %d redraws in %v (bound %d)", st.Seq, redraws, elapsed, bound)
	require.Greater(t, st.Seq, uint64(100), "the burst wrote too little to test anything")
	require.LessOrEqual(t, redraws, bound, "more than 10 redraws a second:\n%q", out)
	require.GreaterOrEqual(t, redraws, 2, "the job running and its end are drawn")
	rows := screenRows(out)
	require.Contains(t, rows, fitStatusLine(st, 100), "the last status is drawn")
}
