package main

import (
	"bytes"
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/internal/testdir"
	"github.com/stretchr/testify/require"
)

// libraryErrorCodes reads the library's errors.go for every sentinel
// literal (&sentinel{"code", ...}) and every code of contextCodes (the
// names of a context's end), and returns the codes, so that a code added
// there is seen here without anyone updating a list.
func libraryErrorCodes(t *testing.T) []string {
	t.Helper()
	path := filepath.Join("..", "..", "errors.go")
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	require.NoError(t, err)
	var codes []string
	contexts := 0
	ast.Inspect(f, func(n ast.Node) bool {
		if vs, ok := n.(*ast.ValueSpec); ok && len(vs.Names) == 1 && vs.Names[0].Name == "contextCodes" {
			for _, v := range vs.Values {
				for _, e := range v.(*ast.CompositeLit).Elts {
					row := e.(*ast.CompositeLit)
					b, ok := row.Elts[len(row.Elts)-1].(*ast.BasicLit)
					require.True(t, ok && b.Kind == token.STRING, "a row of contextCodes in %s does not end with its code", path)
					code, err := strconv.Unquote(b.Value)
					require.NoError(t, err)
					codes = append(codes, code)
					contexts++
				}
			}
			return false
		}
		lit, ok := n.(*ast.CompositeLit)
		if !ok {
			return true
		}
		if id, ok := lit.Type.(*ast.Ident); !ok || id.Name != "sentinel" || len(lit.Elts) == 0 {
			return true
		}
		b, ok := lit.Elts[0].(*ast.BasicLit)
		require.True(t, ok && b.Kind == token.STRING, "a sentinel literal in %s does not start with its code", path)
		code, err := strconv.Unquote(b.Value)
		require.NoError(t, err)
		codes = append(codes, code)
		return true
	})
	require.Equal(t, 2, contexts, "contextCodes in %s was not read as expected", path)
	return append(codes, "io") // ErrorCode's name for an error of no kind
}

// Every code jobstore.ErrorCode can return is listed in `list --help`,
// where scripts that read --json learn the kinds.
func TestListHelp_NamesEveryErrorKind(t *testing.T) {
	codes := libraryErrorCodes(t)
	// The parse must find the sentinels the CLI knows of, or it proves nothing.
	for _, s := range []error{jobstore.ErrNotJob, jobstore.ErrExists, jobstore.ErrCorrupt, jobstore.ErrTooLarge,
		jobstore.ErrInvalid, jobstore.ErrNewerSchema, jobstore.ErrNoMigration, jobstore.ErrLocked,
		jobstore.ErrCancelRequested, jobstore.ErrNotRegular, jobstore.ErrNotOwner, jobstore.ErrNotDue} {
		require.Contains(t, codes, jobstore.ErrorCode(s), "errors.go was not read as expected")
	}
	help := runCLI(t, "list", "--help").stdout
	m := regexp.MustCompile(`"kind" is one of ([a-z_,\s]+);`).FindStringSubmatch(help)
	require.NotNil(t, m, "list --help has no sentence listing the error kinds")
	listed := map[string]bool{}
	for _, k := range strings.Split(m[1], ",") {
		listed[strings.TrimSpace(k)] = true
	}
	for _, code := range codes {
		require.True(t, listed[code], "list --help does not name the error kind %q (it lists %s)", code, m[1])
	}
}

// librarySentinels are the library's sentinels, by their ErrorCode.
func librarySentinels(t *testing.T) map[string]error {
	t.Helper()
	byCode := map[string]error{"io": nil, "timeout": context.DeadlineExceeded, "interrupted": context.Canceled}
	for _, s := range []error{jobstore.ErrNotJob, jobstore.ErrExists, jobstore.ErrCorrupt, jobstore.ErrTooLarge,
		jobstore.ErrInvalid, jobstore.ErrNewerSchema, jobstore.ErrNoMigration, jobstore.ErrLocked,
		jobstore.ErrCancelRequested, jobstore.ErrNotRegular, jobstore.ErrNotOwner, jobstore.ErrNotDue} {
		byCode[jobstore.ErrorCode(s)] = s
	}
	for _, code := range libraryErrorCodes(t) {
		require.Contains(t, byCode, code, "a sentinel of errors.go is missing from this test's list")
	}
	return byCode
}

// For every kind of error, the library's remedy is what the CLI shows,
// unless it speaks to Go programmers: then the CLI's remedy for the kind,
// which names no Go function or option. A missing job and a taken ID
// always get the CLI's, which names the argument as typed.
func TestCLIRemedy_EachKindShowsTheLibrarysUnlessItSpeaksGo(t *testing.T) {
	const english = "wait for the other process, then try again"
	const goSpeak = "call Flush, or read it with a larger WithMaxSize"
	require.False(t, speaksGo(english))
	require.True(t, speaksGo(goSpeak))
	for code, s := range librarySentinels(t) {
		t.Run(code, func(t *testing.T) {
			lib := &jobstore.Error{Op: "read status", Path: "p", Subject: "state", Sentinel: s, Remedy: english}
			wrapped := fmt.Errorf("context: %w", lib)
			goLib := &jobstore.Error{Op: "read status", Path: "p", Subject: "state", Sentinel: s, Remedy: goSpeak}
			bare := &jobstore.Error{Op: "read status", Path: "p", Subject: "state", Sentinel: s}
			switch code {
			case "not_job", "exists":
				for _, err := range []error{lib, goLib, bare} {
					require.Contains(t, cliRemedy(err), "jobstore ", "the CLI's remedy, naming a command")
				}
				return
			}
			require.Equal(t, english, cliRemedy(lib))
			require.Equal(t, english, cliRemedy(wrapped), "found through a wrapping error")
			require.Equal(t, english, cliRemedy(&jobstore.Error{Op: "start", Err: lib}), "the outermost remedy there is")
			require.Equal(t, "mine", cliRemedy(&jobstore.Error{Op: "start", Err: lib, Remedy: "mine"}), "the outermost remedy there is")
			for _, err := range []error{goLib, bare} {
				remedy := cliRemedy(err)
				require.Equal(t, kindRemedy(err), remedy)
				require.NotEmpty(t, remedy)
				require.False(t, speaksGo(remedy), "%q", remedy)
				require.NotContains(t, remedy, "WithMaxSize")
			}
		})
	}
}

// The library's remedies that name Go API (an exported identifier of the
// package, in a string literal of its sources) are all recognised as such,
// so that none reaches a user of the command.
func TestSpeaksGo_RecognisesEveryLibraryStringThatNamesGoAPI(t *testing.T) {
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join("..", "..", "*.go"))
	require.NoError(t, err)
	exported := map[string]bool{}
	var lits []string
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		require.NoError(t, err)
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				exported[d.Name.Name] = d.Name.IsExported()
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch spec := spec.(type) {
					case *ast.TypeSpec:
						exported[spec.Name.Name] = spec.Name.IsExported()
					case *ast.ValueSpec:
						for _, n := range spec.Names {
							exported[n.Name] = n.IsExported()
						}
					}
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if b, ok := n.(*ast.BasicLit); ok && b.Kind == token.STRING {
				if s, err := strconv.Unquote(b.Value); err == nil && strings.Contains(s, " ") {
					lits = append(lits, s)
				}
			}
			return true
		})
	}
	require.True(t, exported["WithMaxSize"] && exported["Flush"], "the package's declarations were not read")
	word := regexp.MustCompile(`[A-Za-z][A-Za-z0-9_]*`)
	named := 0
	for _, lit := range lits {
		for _, loc := range word.FindAllStringIndex(lit, -1) {
			w := lit[loc[0]:loc[1]]
			// An identifier as a word of the text, not the first word of
			// a sentence, nor an acronym (ID) that English uses as well.
			first := strings.TrimSpace(lit[:loc[0]]) == "" || strings.HasSuffix(strings.TrimSpace(lit[:loc[0]]), ".")
			if !exported[w] || first || w == strings.ToUpper(w) {
				continue
			}
			named++
			require.True(t, speaksGo(lit), "%q names %s, which a command-line user cannot call", lit, w)
			break
		}
	}
	require.GreaterOrEqual(t, named, 5, "the library's remedies that name Go API were not found")
}

// The remedies the CLI writes itself never look like Go to speaksGo.
func TestSpeaksGo_NotTheCLIsOwnRemedies(t *testing.T) {
	for code, s := range librarySentinels(t) {
		for _, subject := range []string{"", "state"} {
			remedy := kindRemedy(&jobstore.Error{Sentinel: s, Subject: subject})
			require.False(t, speaksGo(remedy), "%s: %q", code, remedy)
		}
	}
	for _, remedy := range []string{notAJobDirRemedy, "nothing to cancel: the job has ended",
		"use it on Windows, e.g. with Python 3.7", "check the path: ROOT is the directory that holds the job directories"} {
		require.False(t, speaksGo(remedy), "%q", remedy)
	}
	for _, remedy := range []string{"read it with a larger WithMaxSize", "the first Submit creates it",
		"stop, then call Finish(Outcome{State: Cancelled})", "a NoSync write (Run.Progress)", "write updates before Close"} {
		require.True(t, speaksGo(remedy), "%q", remedy)
	}
}

// stderrRemedy is the remedy of the one error line on stderr.
func stderrRemedy(t *testing.T, r result) string {
	t.Helper()
	requireErrorLine(t, r)
	_, remedy, _ := strings.Cut(strings.TrimSpace(r.stderr), ". Remedy: ")
	return remedy
}

// remedyOf is the remedy the library gave err.
func remedyOf(t *testing.T, err error) string {
	t.Helper()
	var je *jobstore.Error
	require.ErrorAs(t, err, &je)
	require.NotEmpty(t, je.Remedy)
	return je.Remedy
}

// Each error kind the command meets, met for real: the remedy on stderr is
// the library's own for that failure (read from the library's error for the
// same input), except where the CLI knows better: the argument names no
// job directory (ROOT/ID), the ID is taken (--id), or the library's remedy
// names Go API.
func TestCLIRemedy_OnTheCommandLineIsTheLibrarysUnlessTheCLIKnowsBetter(t *testing.T) {
	fixture := func(name string) jobstore.JobDir { return jobstore.JobDir(filepath.Join(brokenRoot, name)) }
	readStatusErr := func(t *testing.T, dir jobstore.JobDir) error {
		_, err := jobstore.ReadStatus(dir)
		require.Error(t, err)
		return err
	}
	for _, tc := range []struct {
		name string
		kind string
		// run makes the failure and runs the command; want is the remedy
		// it must show.
		run  func(t *testing.T) (r result, want string)
		code int
	}{
		{"cancel a finished job", "invalid", func(t *testing.T) (result, string) {
			dir := runJob(t, testdir.New(t), "done", jobstore.Outcome{State: jobstore.Succeeded})
			libErr := jobstore.RequestCancel(dir, jobstore.CancelRequest{})
			require.Equal(t, "nothing to cancel: the job has ended", remedyOf(t, libErr))
			return runCLI(t, "cancel", string(dir)), remedyOf(t, libErr)
		}, exitUnsuccessful},
		{"show a progress out of range", "invalid", func(t *testing.T) (result, string) {
			dir := fixture("status-bad-progress")
			return runCLI(t, "show", string(dir)), remedyOf(t, readStatusErr(t, dir))
		}, exitRuntime},
		{"show a status from a newer jobstore", "newer_schema", func(t *testing.T) (result, string) {
			dir := fixture("status-newer")
			return runCLI(t, "show", string(dir)), remedyOf(t, readStatusErr(t, dir))
		}, exitRuntime},
		{"show a status with no migration", "no_migration", func(t *testing.T) (result, string) {
			dir := fixture("status-v0")
			return runCLI(t, "show", string(dir)), remedyOf(t, readStatusErr(t, dir))
		}, exitRuntime},
		{"show a status that is a FIFO", "not_regular", func(t *testing.T) (result, string) {
			dir := submit(t, testdir.New(t), "j")
			require.NoError(t, os.Remove(dir.StatusPath()))
			if err := mkfifo(dir.StatusPath()); err != nil {
				t.Skipf("no FIFOs here: %v", err)
			}
			return runCLI(t, "show", string(dir)), remedyOf(t, readStatusErr(t, dir))
		}, exitRuntime},
		{"submit into a file", "io", func(t *testing.T) (result, string) {
			file := filepath.Join(testdir.New(t), "file")
			require.NoError(t, os.WriteFile(file, nil, 0o644))
			_, libErr := jobstore.Submit(file, jobstore.JobSpec{ID: "j", Kind: "k"})
			return runCLI(t, "submit", file, "--kind", "k", "--id", "j"), remedyOf(t, libErr)
		}, exitRuntime},
		// The library's remedy names Go API: the CLI's for the kind.
		{"show a truncated status", "corrupt", func(t *testing.T) (result, string) {
			dir := fixture("status-truncated")
			require.True(t, speaksGo(remedyOf(t, readStatusErr(t, dir))))
			return runCLI(t, "show", string(dir)), kindRemedy(readStatusErr(t, dir))
		}, exitRuntime},
		{"show a status of 17 MiB", "too_large", func(t *testing.T) (result, string) {
			dir := submit(t, testdir.New(t), "j")
			require.NoError(t, os.WriteFile(dir.StatusPath(), bytes.Repeat([]byte(" "), 17<<20), 0o644))
			require.True(t, speaksGo(remedyOf(t, readStatusErr(t, dir))))
			return runCLI(t, "show", string(dir)), kindRemedy(readStatusErr(t, dir))
		}, exitRuntime},
		// The CLI knows what the argument was meant to be.
		{"show a directory that is no job", "not_job", func(t *testing.T) (result, string) {
			return runCLI(t, "show", testdir.New(t)), notAJobDirRemedy
		}, exitRuntime},
		{"submit a taken ID", "exists", func(t *testing.T) (result, string) {
			root := testdir.New(t)
			submit(t, root, "j")
			return runCLI(t, "submit", root, "--kind", "k", "--id", "j"), "choose another --id; 'jobstore show ROOT/ID' shows the existing job"
		}, exitRuntime},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, want := tc.run(t)
			requireCode(t, r, tc.code)
			require.Equal(t, want, stderrRemedy(t, r))
			require.False(t, speaksGo(want), "%q", want)
		})
	}
}

// A file given where a job directory belongs (show /etc/passwd) is an
// argument mistyped, not a job directory gone wrong: the remedy says to
// give a job directory, never to remove or replace the file.
func TestCLIRemedy_AFileForAJobDirectoryIsAMistypedArgument(t *testing.T) {
	file := filepath.Join(testdir.New(t), "passwd")
	require.NoError(t, os.WriteFile(file, []byte("root:x:0:0::/root:/bin/sh\n"), 0o644))
	for _, args := range [][]string{{"show", file}, {"show", file, "--json"}, {"watch", file}, {"cancel", file}} {
		t.Run(strings.Join(append(args[:1:1], args[2:]...), " "), func(t *testing.T) {
			r := runCLI(t, args...)
			requireCode(t, r, exitRuntime)
			require.Equal(t, notAJobDirRemedy, stderrRemedy(t, r))
			require.Empty(t, r.stdout)
		})
	}
}
