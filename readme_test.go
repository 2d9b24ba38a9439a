package jobstore_test

import (
	"bufio"
	"bytes"
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// maxReadmeSize keeps the README a page a newcomer reads in one sitting; the
// rest belongs in docs/.
const maxReadmeSize = 12000

// readmeBlock returns the one fenced code block of README.md in lang.
func readmeBlock(t *testing.T, lang string) string {
	t.Helper()
	readme := string(readFile(t, "README.md"))
	re := regexp.MustCompile("(?ms)^```" + lang + "\n(.*?)^```\n")
	blocks := re.FindAllStringSubmatch(readme, -1)
	require.Len(t, blocks, 1, "README.md should hold exactly one ```%s block", lang)
	return blocks[0][1]
}

func TestReadme_IsShort(t *testing.T) {
	assert.LessOrEqual(t, len(readFile(t, "README.md")), maxReadmeSize, "move detail from README.md into docs/")
}

// TestReadme_GoBlockIsTheCompiledExample: the README's Go code is
// example_readme_test.go byte for byte, so what readers copy compiles and
// prints what its Output comment says.
func TestReadme_GoBlockIsTheCompiledExample(t *testing.T) {
	assert.Equal(t, string(readFile(t, "example_readme_test.go")), readmeBlock(t, "go"),
		"copy example_readme_test.go into README.md's ```go block")
}

// TestReadme_TheTestCommandIsTheOneCIRuns: .ci/run runs the README's test
// command; the README must go on naming it.
func TestReadme_TheTestCommandIsTheOneCIRuns(t *testing.T) {
	assert.Contains(t, string(readFile(t, "README.md")), "go test ./...")
	assert.Contains(t, string(readFile(t, filepath.Join(".ci", "run"))), "go test ./...")
}

// TestDocs_RelativeLinksResolve: every relative link in README.md, CHANGELOG.md
// and docs/*.md names a file or directory of the repository.
func TestDocs_RelativeLinksResolve(t *testing.T) {
	pages, err := filepath.Glob(filepath.Join("docs", "*.md"))
	require.NoError(t, err)
	require.NotEmpty(t, pages, "docs/*.md")
	pages = append(pages, "README.md", "CHANGELOG.md")
	link := regexp.MustCompile(`\]\(([^)#\s]+)(#[^)]*)?\)`)
	for _, page := range pages {
		for _, m := range link.FindAllStringSubmatch(string(readFile(t, page)), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			_, err := os.Stat(filepath.Join(filepath.Dir(page), filepath.FromSlash(target)))
			assert.NoError(t, err, "%s links to %s", page, target)
		}
	}
}

// readmePython writes the README's Python block to a file and returns a
// function that makes a command running it with args, python/ on its
// module path, as the README tells a reader to run it.
func readmePython(t *testing.T) func(ctx context.Context, args ...string) *exec.Cmd {
	t.Helper()
	py := python(t)
	script := filepath.Join(tempDir(t), "example.py")
	writeFile(t, script, []byte(readmeBlock(t, "python")))
	module, err := filepath.Abs("python")
	require.NoError(t, err)
	return func(ctx context.Context, args ...string) *exec.Cmd {
		cmd := exec.CommandContext(ctx, py, append([]string{script}, args...)...)
		cmd.Env = append(os.Environ(), "PYTHONPATH="+module, "PYTHONDONTWRITEBYTECODE=1")
		return cmd
	}
}

// TestReadme_PythonPollerReadsARealJob runs the README's Python poll with
// python3 on job directories written by jobstore.
func TestReadme_PythonPollerReadsARealJob(t *testing.T) {
	example := readmePython(t)
	root := filepath.Join(tempDir(t), "jobs")

	// start runs the poller on dir; lines yields what it prints.
	start := func(t *testing.T, dir string) (cmd *exec.Cmd, lines *bufio.Scanner, stderr *bytes.Buffer) {
		t.Helper()
		// The timeout only guards against a hang; the poller sleeps 1 s a round.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		t.Cleanup(cancel)
		cmd = example(ctx, "poll", dir)
		stderr = new(bytes.Buffer)
		cmd.Stderr = stderr
		out, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		return cmd, bufio.NewScanner(out), stderr
	}
	next := func(t *testing.T, lines *bufio.Scanner, stderr *bytes.Buffer) string {
		t.Helper()
		require.True(t, lines.Scan(), "the poller printed nothing more; stderr: %s", stderr)
		return lines.Text()
	}

	t.Run("a running job, followed until it ends", func(t *testing.T) {
		dir, err := jobstore.Submit(root, jobstore.JobSpec{ID: "running", Kind: "render"})
		require.NoError(t, err)
		// An interval no test outlasts: only Flush writes the progress, so
		// what the poller reads first cannot depend on how fast it starts.
		run, err := jobstore.Start(dir, jobstore.WithProgressInterval(time.Hour))
		require.NoError(t, err)
		defer run.Close()
		require.NoError(t, run.Progress(0.5, "frame 2/4"))
		require.NoError(t, run.Flush()) // Progress is coalesced: on disk only now

		cmd, lines, stderr := start(t, string(dir))
		assert.Equal(t, "running 50% frame 2/4", next(t, lines, stderr))
		require.NoError(t, run.Finish(jobstore.Outcome{State: jobstore.Succeeded, Message: "4 frames"}))
		last := ""
		for lines.Scan() {
			last = lines.Text()
		}
		require.NoError(t, cmd.Wait(), "stderr: %s", stderr)
		assert.Equal(t, "succeeded 50% 4 frames", last)
	})

	t.Run("a queued job: no progress yet", func(t *testing.T) {
		dir, err := jobstore.Submit(root, jobstore.JobSpec{ID: "queued", Kind: "render"})
		require.NoError(t, err)
		_, lines, stderr := start(t, string(dir))
		assert.Equal(t, "queued", next(t, lines, stderr), "no \"None\", nor a blank, for a progress or message not yet known")
	})

	t.Run("a running job with a progress and no message", func(t *testing.T) {
		dir, err := jobstore.Submit(root, jobstore.JobSpec{ID: "silent", Kind: "render"})
		require.NoError(t, err)
		run, err := jobstore.Start(dir, jobstore.WithProgressInterval(time.Hour))
		require.NoError(t, err)
		defer run.Close()
		require.NoError(t, run.Progress(0.25, ""))
		require.NoError(t, run.Flush())
		_, lines, stderr := start(t, string(dir))
		assert.Equal(t, "running 25%", next(t, lines, stderr))
	})

	t.Run("a job with no status yet", func(t *testing.T) {
		dir := jobstore.JobDir(filepath.Join(root, "submitted"))
		require.NoError(t, jobstore.WriteSpec(dir, jobstore.JobSpec{ID: dir.ID(), Kind: "render"}))
		_, lines, stderr := start(t, string(dir))
		assert.Equal(t, "nothing has run yet", next(t, lines, stderr))
	})

	t.Run("not a job", func(t *testing.T) {
		cmd, lines, stderr := start(t, tempDir(t))
		for lines.Scan() {
		}
		require.Error(t, cmd.Wait())
		assert.Contains(t, stderr.String(), "not_job: jobstore: read status")
		assert.Contains(t, stderr.String(), "no job.json here")
	})

	t.Run("a status from a newer jobstore", func(t *testing.T) {
		dir := newJob(t, "j1")
		writeFile(t, dir.StatusPath(), readFile(t, filepath.Join("testdata", "status.newer.json")))
		cmd, lines, stderr := start(t, string(dir))
		for lines.Scan() {
		}
		require.Error(t, cmd.Wait())
		assert.Contains(t, stderr.String(), "newer_schema: ")
		assert.Contains(t, stderr.String(), "written by a newer jobstore (schema_version 3); this version understands up to 2")
	})
}

// TestReadme_PythonSubmitWaitCancel: the README's Python submit makes a job
// StartNext starts; its cancel is heard by the runner, once; its wait
// prints how the job ended.
func TestReadme_PythonSubmitWaitCancel(t *testing.T) {
	example := readmePython(t)
	root := filepath.Join(tempDir(t), "jobs")
	// A root workers take jobs from: the example's submit makes none.
	require.NoError(t, os.Mkdir(root, 0o755))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a hang guard
	defer cancel()
	run := func(args ...string) string {
		t.Helper()
		out, err := example(ctx, args...).Output()
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		require.NoError(t, err, "%s", stderr)
		return strings.TrimSpace(string(out))
	}

	dir := jobstore.JobDir(run("submit", root))
	spec, err := jobstore.ReadSpec(dir)
	require.NoError(t, err)
	assert.Equal(t, "render", spec.Kind)
	assert.JSONEq(t, `{"frames": 3}`, string(spec.Params))
	done, stop := context.WithCancel(context.Background())
	stop()
	r, err := jobstore.StartNext(done, root, jobstore.WithKinds("render"))
	require.NoError(t, err)
	defer r.Close()
	require.Equal(t, dir, r.Dir())

	assert.Equal(t, "requested", run("cancel", string(dir)))
	assert.Equal(t, "already requested", run("cancel", string(dir)))
	select {
	case <-r.Context().Done():
	case <-ctx.Done():
		t.Fatal("the runner never heard the cancel request")
	}
	require.ErrorIs(t, context.Cause(r.Context()), jobstore.ErrCancelRequested)
	require.NoError(t, r.Finish(jobstore.Outcome{State: jobstore.Cancelled, Message: "stopped"}))
	assert.Equal(t, "cancelled stopped", run("wait", string(dir)))
}

// sentinelCodes reads errors.go for each sentinel variable and its code
// (ErrNotJob error = &sentinel{CodeNotJob, ...}, CodeNotJob Code =
// "not_job"), so that a sentinel added there is seen without anyone
// updating a list.
func sentinelCodes(t *testing.T) map[string]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "errors.go", nil, 0)
	require.NoError(t, err)
	consts := map[string]string{} // CodeNotJob -> "not_job"
	lits := map[string]string{}   // ErrNotJob -> CodeNotJob
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || len(vs.Names) != 1 || len(vs.Values) != 1 {
			return true
		}
		if b, ok := vs.Values[0].(*ast.BasicLit); ok && b.Kind == token.STRING {
			if id, ok := vs.Type.(*ast.Ident); ok && id.Name == "Code" {
				code, err := strconv.Unquote(b.Value)
				require.NoError(t, err)
				consts[vs.Names[0].Name] = code
			}
			return true
		}
		u, ok := vs.Values[0].(*ast.UnaryExpr)
		if !ok {
			return true
		}
		lit, ok := u.X.(*ast.CompositeLit)
		if id, isIdent := lit.Type.(*ast.Ident); !ok || !isIdent || id.Name != "sentinel" || len(lit.Elts) == 0 {
			return true
		}
		c, ok := lit.Elts[0].(*ast.Ident)
		require.True(t, ok, "sentinel %s does not start with its code's constant", vs.Names[0].Name)
		lits[vs.Names[0].Name] = c.Name
		return true
	})
	codes := map[string]string{}
	for name, c := range lits {
		require.Contains(t, consts, c, "sentinel %s's code %s is not a Code constant of errors.go", name, c)
		codes[name] = consts[c]
	}
	require.Equal(t, "not_owner", codes["ErrNotOwner"], "errors.go was not read as expected")
	require.Equal(t, jobstore.CodeNotOwner, jobstore.ErrorCode(jobstore.ErrNotOwner))
	return codes
}

// TestDocs_ErrorTableNamesEverySentinel: the error table of
// docs/guarantees.md has one row per sentinel of errors.go, with its
// ErrorCode, and the row for errors of no kind ("io"); nothing more.
func TestDocs_ErrorTableNamesEverySentinel(t *testing.T) {
	want := map[string]string{"(none)": "io"}
	for name, code := range sentinelCodes(t) {
		want["`"+name+"`"] = code
	}
	got := map[string]string{}
	row := regexp.MustCompile("(?m)^\\| (`Err\\w+`|\\(none\\)) \\| `(\\w+)` \\|")
	for _, m := range row.FindAllStringSubmatch(string(readFile(t, filepath.Join("docs", "guarantees.md"))), -1) {
		require.NotContains(t, got, m[1], "a second row for %s", m[1])
		got[m[1]] = m[2]
	}
	assert.Equal(t, want, got, "docs/guarantees.md's error table")
}

// TestDocs_AKilledRunnerLosesOneProgressInterval: the guarantees name the
// progress interval a killed runner may lose, with its default as the
// package has it.
func TestDocs_AKilledRunnerLosesOneProgressInterval(t *testing.T) {
	doc := string(readFile(t, filepath.Join("docs", "guarantees.md")))
	m := regexp.MustCompile("(?s)## What a killed runner loses\n(.*?)\n## ").FindStringSubmatch(doc)
	require.NotNil(t, m, "docs/guarantees.md says nothing of what a killed runner loses")
	assert.Contains(t, m[1], "SIGKILL")
	d := regexp.MustCompile("`DefaultProgressInterval`, (\\d+) ms").FindStringSubmatch(m[1])
	require.NotNil(t, d, "the section names the default interval")
	assert.Equal(t, d[1], strconv.FormatInt(jobstore.DefaultProgressInterval.Milliseconds(), 10))
}

// moduleDeps is the modules other than this one that pkg needs at run time
// (its tests' aside), as go list reports them.
func moduleDeps(t *testing.T, pkg string) []string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command here to list the dependencies")
	}
	out, err := exec.Command(goTool, "list", "-deps", "-f", "{{with .Module}}{{if not .Main}}{{.Path}}{{end}}{{end}}", pkg).Output()
	require.NoError(t, err)
	seen := map[string]bool{}
	var mods []string
	for _, m := range strings.Fields(string(out)) {
		if !seen[m] {
			seen[m] = true
			mods = append(mods, m)
		}
	}
	return mods
}

// TestDocs_NameTheRuntimeDependencies: docs/cli.md names the modules the
// library needs at run time, and those the command adds, as go list finds
// them, none missing, none more; the README names the library's.
func TestDocs_NameTheRuntimeDependencies(t *testing.T) {
	m := regexp.MustCompile(`(?s)the\s+library\s+depends\s+on\s+(.*?),\s+and\s+the\s+command\s+on\s+(.*?)\s+as\s+well\.`).FindStringSubmatch(string(readFile(t, filepath.Join("docs", "cli.md"))))
	require.NotNil(t, m, "docs/cli.md has no sentence naming the run-time dependencies")
	named := func(s string) []string {
		var mods []string
		for _, b := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(s, -1) {
			mods = append(mods, b[1])
		}
		return mods
	}
	library := moduleDeps(t, ".")
	var command []string
	for _, mod := range moduleDeps(t, "./cmd/jobstore") {
		if !slices.Contains(library, mod) {
			command = append(command, mod)
		}
	}
	require.NotEmpty(t, library)
	assert.ElementsMatch(t, library, named(m[1]), "the library's dependencies")
	assert.ElementsMatch(t, command, named(m[2]), "what the command adds")
	readme := string(readFile(t, "README.md"))
	for _, mod := range library {
		assert.True(t, strings.Contains(readme, "`"+mod+"`"), "README.md does not name the library's dependency %s", mod)
	}
}

// TestReadme_TwoCommandsRunTheDemoAndTheTests: the README's "Two commands"
// are commands to type in the clone: the first runs the demo (a real
// subcommand: its help is asked for here), the second the tests; no set-up
// command such as "go get", which a clone does not need.
func TestReadme_TwoCommandsRunTheDemoAndTheTests(t *testing.T) {
	m := regexp.MustCompile("(?m)^## Two commands\n\n(?:[^ \n].*\n\n)?((?:    .*\n)+)").FindStringSubmatch(string(readFile(t, "README.md")))
	require.NotNil(t, m, "README.md has no block under \"## Two commands\"")
	var commands []string
	for _, line := range strings.Split(strings.TrimSuffix(m[1], "\n"), "\n") {
		command, _, _ := strings.Cut(line, "#")
		commands = append(commands, strings.TrimSpace(command))
	}
	require.Equal(t, []string{"go run ./cmd/jobstore demo", "go test ./..."}, commands)

	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command here to run the demo's help")
	}
	args := append(strings.Fields(commands[0])[1:], "--help")
	out, err := exec.Command(goTool, args...).CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.True(t, strings.HasPrefix(string(out), "Usage: jobstore demo"), "%s", out)
}
