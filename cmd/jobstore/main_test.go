package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/axqua/jobstore/internal/prereq"
)

// selfEnv set to 1 makes the test binary the command. The tests run the
// jobstore binary on real directories. TestMain builds it
// once with "go build"; where no go command is at hand (a Windows test
// binary under Wine), the test binary itself stands in for it: run as
// selfEnv=1, it is the command.
const selfEnv = "JOBSTORE_CLI_TEST_AS_COMMAND"

var (
	update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

	// cli is the command line that runs the jobstore binary (cliEnv is
	// added to its environment).
	cli    string
	cliEnv []string
)

// cliTimeout bounds one run of the binary; a watch that never ends fails
// the test instead of hanging it.
const cliTimeout = 60 * time.Second

func TestMain(m *testing.M) {
	if role := os.Getenv(jobRoleEnv); role != "" && os.Getenv(jobDirEnv) != "" {
		// A job's command run by "jobstore work" (work_test.go), which sets
		// the job's directory; the worker itself may be this binary too.
		os.Exit(runJobRole(role))
	}
	if os.Getenv(selfEnv) == "1" {
		os.Exit(runCommandLine(os.Args[1:], os.Stdout, os.Stderr))
	}
	flag.Parse()
	dir, err := os.MkdirTemp("", "jobstore-cli-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := func() int {
		defer os.RemoveAll(dir)
		if err := buildCLI(dir); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return m.Run()
	}()
	prereq.Report("github.com/axqua/jobstore/cmd/jobstore")
	os.Exit(code)
}

func buildCLI(dir string) error {
	goTool, err := exec.LookPath("go") // go test puts GOROOT/bin first in PATH
	if err != nil {
		self, err := os.Executable()
		if err != nil {
			return err
		}
		fmt.Fprintln(os.Stderr, "cmd/jobstore tests: no go command; the test binary stands in for jobstore")
		cli, cliEnv = self, []string{selfEnv + "=1"}
		return nil
	}
	cli = filepath.Join(dir, "jobstore")
	if runtime.GOOS == "windows" {
		cli += ".exe"
	}
	out, err := exec.Command(goTool, "build", "-o", cli, ".").CombinedOutput()
	if err != nil {
		return fmt.Errorf("go build ./cmd/jobstore: %v\n%s", err, out)
	}
	return nil
}

// result is what one run of the binary did.
type result struct {
	stdout, stderr string
	code           int
}

// jobstoreCmd returns the command for the binary with args; env entries
// ("K=V") are added to the environment.
func jobstoreCmd(ctx context.Context, env []string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, cli, args...)
	cmd.Env = append(append(os.Environ(), cliEnv...), env...)
	return cmd
}

// runCLI runs the binary to its end.
func runCLI(t *testing.T, args ...string) result {
	t.Helper()
	return runCLIEnv(t, nil, args...)
}

func runCLIEnv(t *testing.T, env []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cliTimeout)
	defer cancel()
	return runToEnd(t, jobstoreCmd(ctx, env, args...), args)
}

// runToEnd runs cmd, the binary with args, to its end and returns what it
// printed and its exit code.
func runToEnd(t *testing.T, cmd *exec.Cmd, args []string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		require.True(t, ok, "jobstore %s: %v", strings.Join(args, " "), err)
		code = ee.ExitCode()
	}
	return result{stdout.String(), stderr.String(), code}
}

// requireCode checks the exit code, showing the output when it is wrong.
func requireCode(t *testing.T, r result, want int) {
	t.Helper()
	require.Equal(t, want, r.code, "exit code\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
}

// requireErrorLine checks that stderr is exactly one line that carries a
// remedy, as every error must.
func requireErrorLine(t *testing.T, r result) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
	require.Len(t, lines, 1, "stderr must be one line:\n%s", r.stderr)
	require.True(t, strings.HasPrefix(lines[0], "jobstore"), "stderr: %s", r.stderr)
	require.Contains(t, lines[0], "Remedy: ")
}

var (
	timestampRE = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`)
	durationRE  = regexp.MustCompile(`\b(\d+ms|\d+\.\ds|\d+s|\d+m\d\ds|\d+h\d\dm|\d+d\d\dh)\b`)
	pidRE       = regexp.MustCompile(`pid \d+ on \S+`)
	pidJSONRE   = regexp.MustCompile(`"pid": \d+`)
	hostJSONRE  = regexp.MustCompile(`"host": "[^"]*"`)
	ownerJSONRE = regexp.MustCompile(`"(pid_scope|pid_start)": ?"[^"]*"`)
	spacesRE    = regexp.MustCompile(`(\S)  +`)
)

// normalize makes output comparable across runs and machines: each
// replacement pair (a path, say) is replaced first, then timestamps become
// TIME, durations DUR, the runner's pid and host PID and HOST, and runs of
// spaces inside a line (table alignment, which depends on the replaced
// widths) two spaces; indentation stays.
func normalize(s string, pairs ...string) string {
	for i := 0; i+1 < len(pairs); i += 2 {
		s = strings.ReplaceAll(s, pairs[i], pairs[i+1])
	}
	if runtime.GOOS == "windows" {
		s = windowsPathRE.ReplaceAllStringFunc(s, func(p string) string {
			return strings.ReplaceAll(strings.ReplaceAll(p, `\\`, `/`), `\`, `/`)
		})
	}
	s = timestampRE.ReplaceAllString(s, "TIME")
	s = durationRE.ReplaceAllString(s, "DUR")
	s = pidRE.ReplaceAllString(s, "pid PID on HOST")
	s = pidJSONRE.ReplaceAllString(s, `"pid": "PID"`)
	s = hostJSONRE.ReplaceAllString(s, `"host": "HOST"`)
	s = ownerJSONRE.ReplaceAllString(s, `"$1": "OWNER"`)
	return spacesRE.ReplaceAllString(s, "$1  ")
}

// rootPairs replaces root (as printed, and as escaped in JSON) with ROOT,
// and on Windows then the separators under it with '/'.
func rootPairs(root string) []string {
	if runtime.GOOS != "windows" {
		return []string{root, "ROOT"}
	}
	native := filepath.FromSlash(root)
	esc := strings.ReplaceAll(native, `\`, `\\`)
	return []string{esc, "ROOT", native, "ROOT", root, "ROOT"}
}

// windowsPathRE matches a path under ROOT with Windows separators (escaped
// in JSON or not).
var windowsPathRE = regexp.MustCompile(`ROOT(?:(?:\\\\|\\)[\w.-]+)+`)

// golden compares got with testdata/golden/name, or rewrites the file
// under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "missing golden file: run go test ./cmd/jobstore -update")
	require.Equal(t, string(want), got, "output differs from %s (if the change is intended: go test ./cmd/jobstore -update)", path)
}

func removeFile(path string) error { return os.Remove(path) }
