package jobstore_test

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// The waits the tests give the external programs they run (python3,
// strace, mknod, the gluster CLI; the two-host kit's mounts have their own,
// in twohost_kit_linux_test.go). Each only guards against a hang: a
// program that has not returned by then is killed and the test fails
// naming it, long before go test's own timeout ends the whole binary
// without saying which command hung.
const (
	// toolTimeout bounds a one-shot helper: a python3 script, a traced
	// child, the gluster CLI, mknod.
	toolTimeout = 3 * time.Minute
	// toolWaitDelay is how long a killed program's output pipes may stay
	// open (a process it forked may hold them) before they are closed; no
	// longer than the program's own timeout.
	toolWaitDelay = 5 * time.Second
)

// toolCommand is exec.Command of name with args, killed after timeout.
// Pass the error of its run to finish: it releases the timer and, when the
// command was killed for outlasting timeout, says so, naming the command.
func toolCommand(timeout time.Duration, name string, args ...string) (cmd *exec.Cmd, finish func(error) error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	cmd = exec.CommandContext(ctx, name, args...)
	cmd.WaitDelay = min(toolWaitDelay, timeout)
	return cmd, func(err error) error {
		defer cancel()
		if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return fmt.Errorf("%s did not return within %v and was killed (%w)", strings.Join(cmd.Args, " "), timeout, err)
		}
		return err
	}
}

// runTool runs name with args and returns its combined output; a run
// longer than timeout is killed, and its error names the command.
func runTool(timeout time.Duration, name string, args ...string) ([]byte, error) {
	cmd, finish := toolCommand(timeout, name, args...)
	out, err := cmd.CombinedOutput()
	return out, finish(err)
}
