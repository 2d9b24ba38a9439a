//go:build unix

package jobstore_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// permDeniedRole reads the file named by JOBSTORE_PERM_FILE and reports on
// stdout what ReadJSONTolerant said; the test runs it as an unprivileged user.
const permDeniedRole = "read-permission-denied"

func init() {
	roles[permDeniedRole] = func() int {
		if os.Getenv("JOBSTORE_DROP_ROOT") != "" { // the test binary itself is unreadable to nobody: drop here
			const nobody = 65534
			if err := syscall.Setgid(nobody); err != nil {
				fmt.Println("setgid:", err)
				return 1
			}
			if err := syscall.Setuid(nobody); err != nil {
				fmt.Println("setuid:", err)
				return 1
			}
		}
		var v any
		found, err := jobstore.ReadJSONTolerant(os.Getenv("JOBSTORE_PERM_FILE"), &v, jobstore.WithRetries(50, time.Second))
		var e *jobstore.Error
		switch {
		case !found || err == nil:
			fmt.Printf("want an error for a found file, got found=%v err=%v\n", found, err)
		case !errors.Is(err, fs.ErrPermission) || errors.Is(err, jobstore.ErrCorrupt):
			fmt.Printf("want a permission error, not ErrCorrupt: %v\n", err)
		case !errors.As(err, &e) || !strings.Contains(e.Remedy, "read permission"):
			fmt.Printf("want a remedy about read permission: %v\n", err)
		default:
			fmt.Println("ok")
			return 0
		}
		return 1
	}
}

// TestReadJSONTolerant_PermissionDeniedIsNotRetriedAndSaysWhatToDo: the
// read runs in a child process, which drops to the uid of nobody when the
// test runs as root (CI). The
// child allows 50 attempts a second apart: a retried permission error would
// take the test past its deadline instead of answering at once.
func TestReadJSONTolerant_PermissionDeniedIsNotRetriedAndSaysWhatToDo(t *testing.T) {
	dir := tempDir(t)
	require.NoError(t, os.Chmod(dir, 0o755))
	path := filepath.Join(dir, "status.json")
	writeFile(t, path, []byte(`{}`))
	require.NoError(t, os.Chmod(path, 0))

	ctx, cancel := context.WithTimeout(context.Background(), permDeniedDeadline)
	t.Cleanup(cancel)
	env := []string{"JOBSTORE_PERM_FILE=" + path}
	if os.Geteuid() == 0 {
		env = append(env, "JOBSTORE_DROP_ROOT=1")
		require.NoError(t, os.Chmod(filepath.Dir(dir), 0o755)) // t.TempDir's parent is 0700
	}
	child := childCommand(t, permDeniedRole, env...)
	cmd := exec.CommandContext(ctx, child.Path, child.Args[1:]...)
	cmd.Env, cmd.Stderr = child.Env, os.Stderr
	got, err := cmd.Output()
	require.NoError(t, ctx.Err(), "the read did not answer within %v: a permission error was retried", permDeniedDeadline)
	require.NoError(t, err, "child: %s", got)
	assert.Equal(t, "ok\n", string(got))
}

// permDeniedDeadline is far below the child's 50 attempts × 1 s.
const permDeniedDeadline = 20 * time.Second
