package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/clitest"
	"github.com/axqua/jobstore/cmd/jobstore/internal/remedy"
	"github.com/axqua/jobstore/internal/testdir"
	"github.com/stretchr/testify/require"
)

// libraryErrorCodes are the codes jobstore.ErrorCode can return (the
// library's Codes, which its own tests hold to its constants).
func libraryErrorCodes(t *testing.T) []string {
	t.Helper()
	var codes []string
	for _, c := range jobstore.Codes() {
		codes = append(codes, string(c))
	}
	require.Contains(t, codes, "not_owner", "jobstore.Codes was not read as expected")
	return codes
}

// Every code jobstore.ErrorCode can return is listed in `list --help`,
// where scripts that read --json learn the kinds.
func TestListHelp_NamesEveryErrorKind(t *testing.T) {
	help := runCLI(t, "list", "--help").stdout
	m := regexp.MustCompile(`"kind" is one of ([a-z_,\s]+);`).FindStringSubmatch(help)
	require.NotNil(t, m, "list --help has no sentence listing the error kinds")
	listed := map[string]bool{}
	for _, k := range strings.Split(m[1], ",") {
		listed[strings.TrimSpace(k)] = true
	}
	for _, code := range libraryErrorCodes(t) {
		require.True(t, listed[code], "list --help does not name the error kind %q (it lists %s)", code, m[1])
	}
}

// errorOfCode is an error whose jobstore.ErrorCode is code, with the
// library's remedy libRemedy where it has one.
func errorOfCode(t *testing.T, code jobstore.Code, libRemedy string) error {
	t.Helper()
	sentinels := []error{jobstore.ErrNotJob, jobstore.ErrExists, jobstore.ErrCorrupt, jobstore.ErrTooLarge,
		jobstore.ErrInvalid, jobstore.ErrWrongState, jobstore.ErrNewerSchema, jobstore.ErrNoMigration, jobstore.ErrLocked,
		jobstore.ErrCancelRequested, jobstore.ErrNotRegular, jobstore.ErrNotOwner, jobstore.ErrNotDue}
	for _, s := range sentinels {
		if jobstore.ErrorCode(s) == code {
			return &jobstore.Error{Op: "read status", Path: "p", Subject: "state", Sentinel: s, Remedy: libRemedy}
		}
	}
	switch code {
	case jobstore.CodeTimeout:
		return &jobstore.Error{Op: "wait", Err: context.DeadlineExceeded, Remedy: libRemedy}
	case jobstore.CodeInterrupted:
		return &jobstore.Error{Op: "wait", Err: context.Canceled, Remedy: libRemedy}
	case jobstore.CodeIO:
		return &jobstore.Error{Op: "fsync", Path: "p", Err: fs.ErrPermission, Remedy: libRemedy}
	}
	t.Fatalf("no error of code %q here: add its sentinel to errorOfCode", code)
	return nil
}

// goAPI is the set of the exported names of the library (its functions,
// types, constants and variables, read from its sources), that a user of
// the command cannot call.
func goAPI(t *testing.T) map[string]bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "*.go"))
	require.NoError(t, err)
	names := map[string]bool{}
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		require.NoError(t, err)
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				names[d.Name.Name] = d.Name.IsExported()
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch spec := spec.(type) {
					case *ast.TypeSpec:
						names[spec.Name.Name] = spec.Name.IsExported()
					case *ast.ValueSpec:
						for _, n := range spec.Names {
							names[n.Name] = n.IsExported()
						}
					}
				}
			}
		}
	}
	require.True(t, names["WithMaxSize"] && names["Flush"] && names["ErrWrongState"], "the package's declarations were not read")
	return names
}

// goAPIIn is what of the library's Go API remedy names: a call
// ("Finish("), a dotted name ("Run.Progress"), or one of its exported
// names that is not an acronym (ID) nor the first word of a sentence.
func goAPIIn(api map[string]bool, remedy string) []string {
	found := regexp.MustCompile(`[A-Za-z]+\(|[A-Z][A-Za-z]*\.[A-Z][A-Za-z]*`).FindAllString(remedy, -1)
	for _, loc := range regexp.MustCompile(`[A-Za-z][A-Za-z0-9_]*`).FindAllStringIndex(remedy, -1) {
		w := remedy[loc[0]:loc[1]]
		before := strings.TrimSpace(remedy[:loc[0]])
		if api[w] && w != strings.ToUpper(w) && before != "" && !strings.HasSuffix(before, ".") {
			found = append(found, w)
		}
	}
	return found
}

// requireNoGoAPI fails if remedy names the library's Go API (goAPIIn).
func requireNoGoAPI(t *testing.T, api map[string]bool, remedy string) {
	t.Helper()
	require.Empty(t, goAPIIn(api, remedy), "%q names Go API, which a user of the command cannot call", remedy)
}

// The CLI has its own remedy, in its own words, for every code the library
// can return: a library remedy (for Go callers) is never shown, however it
// is worded, and none of the CLI's names Go API.
func TestCLIRemedy_EveryCodeHasTheCLIsOwn(t *testing.T) {
	api := goAPI(t)
	const libRemedy = "wait for the other process, then try again" // plain words, as a library remedy may be
	seen := map[string]jobstore.Code{}
	for _, code := range jobstore.Codes() {
		t.Run(string(code), func(t *testing.T) {
			err := errorOfCode(t, code, libRemedy)
			require.Equal(t, code, jobstore.ErrorCode(err))
			hint, known := remedy.CodeRemedy(err)
			require.True(t, known, "the CLI has no remedy of its own for %q: add it to codeRemedy", code)
			require.NotEmpty(t, hint)
			require.Equal(t, hint, remedy.CliRemedy(err))
			require.Equal(t, hint, remedy.CliRemedy(fmt.Errorf("context: %w", err)), "found through a wrapping error")
			require.Equal(t, hint, remedy.CliRemedy(&jobstore.Error{Op: "start", Err: err, Remedy: "call Flush"}), "not the outer library remedy either")
			require.NotContains(t, hint, libRemedy)
			require.Equal(t, "mine", remedy.CliRemedy(remedy.WithCLIRemedy(err, "mine")), "a command's own remedy comes first")
			requireNoGoAPI(t, api, hint)
			if other, dup := seen[hint]; dup && code != jobstore.CodeIO {
				t.Errorf("%s and %s share the remedy %q", code, other, hint)
			}
			seen[hint] = code
		})
	}
	_, known := remedy.CodeRemedy(&jobstore.Error{Sentinel: errors.New("a kind of elsewhere")})
	require.True(t, known, "an *Error of no jobstore kind is an I/O error to the CLI")
}

// The check for Go API above finds it where it is: the library's own
// remedies that name Go functions, options or calls.
func TestRequireNoGoAPI_FindsTheLibrarysGoRemedies(t *testing.T) {
	api := goAPI(t)
	for _, hint := range []string{"read it with a larger WithMaxSize", "the first Submit creates it",
		"stop, then call Finish(Outcome{State: Cancelled})", "a NoSync write (Run.Progress)", "write updates before Close"} {
		require.NotEmpty(t, goAPIIn(api, hint), "%q names Go API, and was not found to", hint)
	}
	for _, hint := range []string{remedy.NotAJobDirRemedy, "nothing to cancel: the job has ended",
		"Wait for it to end ('jobstore wait ROOT/ID')", "check the path: ROOT is the directory that holds the job directories"} {
		requireNoGoAPI(t, api, hint)
	}
}

// stderrRemedy is the remedy of the one error line on stderr.
func stderrRemedy(t *testing.T, r result) string {
	t.Helper()
	requireErrorLine(t, r)
	_, remedy, _ := strings.Cut(strings.TrimSpace(r.stderr), ". Remedy: ")
	return remedy
}

// libraryErr is the error the library gives, for the same input as the
// command's: its remedy is for Go callers, never shown by the command.
func libraryErr(t *testing.T, err error) error {
	t.Helper()
	var je *jobstore.Error
	require.ErrorAs(t, err, &je)
	require.NotEmpty(t, je.Remedy)
	return err
}

// Each error kind the command meets, met for real: the remedy on stderr is
// the CLI's for the kind of the library's error for the same input
// (codeRemedy), or the command's own where it knows what its argument was
// meant to be; never the library's remedy, however it is worded.
func TestCLIRemedy_OnTheCommandLineIsTheCLIsNeverTheLibrarys(t *testing.T) {
	fixture := func(name string) jobstore.JobDir { return jobstore.JobDir(filepath.Join(brokenRoot, name)) }
	readStatusErr := func(t *testing.T, dir jobstore.JobDir) error {
		_, err := jobstore.ReadStatus(dir)
		require.Error(t, err)
		return libraryErr(t, err)
	}
	byCode := func(t *testing.T, err error) string {
		remedy, known := remedy.CodeRemedy(err)
		require.True(t, known)
		return remedy
	}
	api := goAPI(t)
	for _, tc := range []struct {
		name string
		// run makes the failure and runs the command; it returns the
		// library's error for the same input and the remedy the command
		// must show.
		run  func(t *testing.T) (r result, want string, lib error)
		code int
	}{
		{"cancel a finished job", func(t *testing.T) (result, string, error) {
			dir := clitest.RunJob(t, testdir.New(t), "done", jobstore.Outcome{State: jobstore.Succeeded})
			libErr := libraryErr(t, jobstore.RequestCancel(dir, jobstore.CancelRequest{}))
			require.ErrorIs(t, libErr, jobstore.ErrWrongState)
			return runCLI(t, "cancel", string(dir)), "nothing to cancel: the job has ended ('jobstore show " + string(dir) + "' says how)", libErr
		}, exitUnsuccessful},
		{"show a progress out of range", func(t *testing.T) (result, string, error) {
			dir := fixture("status-bad-progress")
			lib := readStatusErr(t, dir)
			return runCLI(t, "show", string(dir)), byCode(t, lib), lib
		}, exitRuntime},
		{"show a status from a newer jobstore", func(t *testing.T) (result, string, error) {
			dir := fixture("status-newer")
			lib := readStatusErr(t, dir)
			return runCLI(t, "show", string(dir)), byCode(t, lib), lib
		}, exitRuntime},
		{"show a status with no migration", func(t *testing.T) (result, string, error) {
			dir := fixture("status-v0")
			lib := readStatusErr(t, dir)
			return runCLI(t, "show", string(dir)), byCode(t, lib), lib
		}, exitRuntime},
		{"show a status that is a FIFO", func(t *testing.T) (result, string, error) {
			dir := clitest.Submit(t, testdir.New(t), "j")
			require.NoError(t, os.Remove(dir.StatusPath()))
			if err := clitest.Mkfifo(dir.StatusPath()); err != nil {
				t.Skipf("no FIFOs here: %v", err)
			}
			lib := readStatusErr(t, dir)
			return runCLI(t, "show", string(dir)), byCode(t, lib), lib
		}, exitRuntime},
		{"submit into a file", func(t *testing.T) (result, string, error) {
			file := filepath.Join(testdir.New(t), "file")
			require.NoError(t, os.WriteFile(file, nil, 0o644))
			_, libErr := jobstore.Submit(file, jobstore.JobSpec{ID: "j", Kind: "k"})
			lib := libraryErr(t, libErr)
			return runCLI(t, "submit", file, "--kind", "k", "--id", "j"), byCode(t, lib), lib
		}, exitRuntime},
		{"show a truncated status", func(t *testing.T) (result, string, error) {
			dir := fixture("status-truncated")
			lib := readStatusErr(t, dir)
			return runCLI(t, "show", string(dir)), byCode(t, lib), lib
		}, exitRuntime},
		{"show a status of 17 MiB", func(t *testing.T) (result, string, error) {
			dir := clitest.Submit(t, testdir.New(t), "j")
			require.NoError(t, os.WriteFile(dir.StatusPath(), bytes.Repeat([]byte(" "), 17<<20), 0o644))
			lib := readStatusErr(t, dir)
			return runCLI(t, "show", string(dir)), byCode(t, lib), lib
		}, exitRuntime},
		{"show a directory that is no job", func(t *testing.T) (result, string, error) {
			dir := testdir.New(t)
			_, err := jobstore.ReadSpec(jobstore.JobDir(dir))
			return runCLI(t, "show", dir), remedy.NotAJobDirRemedy, libraryErr(t, err)
		}, exitRuntime},
		{"submit a taken ID", func(t *testing.T) (result, string, error) {
			root := testdir.New(t)
			clitest.Submit(t, root, "j")
			_, err := jobstore.Submit(root, jobstore.JobSpec{ID: "j", Kind: "k"})
			return runCLI(t, "submit", root, "--kind", "k", "--id", "j"), "choose another --id; 'jobstore show ROOT/ID' shows the existing job", libraryErr(t, err)
		}, exitRuntime},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, want, lib := tc.run(t)
			requireCode(t, r, tc.code)
			got := stderrRemedy(t, r)
			require.Equal(t, want, got)
			var je *jobstore.Error
			require.ErrorAs(t, lib, &je)
			require.NotEqual(t, je.Remedy, got, "the library's remedy, for Go callers")
			requireNoGoAPI(t, api, got)
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
			require.Equal(t, remedy.NotAJobDirRemedy, stderrRemedy(t, r))
			require.Empty(t, r.stdout)
		})
	}
}

// The messages a new user meets name what was typed, say what is wrong in
// the command's words, and what to do.
func TestCLIMessages_NameWhatWasTypedAndWhatToDo(t *testing.T) {
	for _, tc := range []struct {
		name string
		// run makes the case and runs the command.
		run  func(t *testing.T) result
		code int
		says []string // parts of stderr, or of stdout for rm's report
		not  []string
	}{
		{"submit --id with a character of two bytes", func(t *testing.T) result {
			return runCLI(t, "submit", testdir.New(t), "--kind", "k", "--id", "café")
		}, exitUsage, []string{`--id: "café" has the character 'é' at byte 3`, "Remedy: choose an ID of letters"}, []string{"Ã"}},
		{"wait on a directory that holds no job", func(t *testing.T) result {
			dir := filepath.Join(testdir.New(t), "j")
			require.NoError(t, os.Mkdir(dir, 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(dir, jobstore.StatusFile), []byte("{"), 0o644))
			return runCLI(t, "wait", dir)
		}, exitRuntime, []string{"jobstore: wait ", "no job.json here", "Remedy: " + remedy.NotAJobDirRemedy}, []string{"watch"}},
		{"rm of a directory that does not exist", func(t *testing.T) result {
			return runCLI(t, "rm", filepath.Join(testdir.New(t), "nope"))
		}, exitRuntime, []string{string(filepath.Separator) + "nope: no such directory", "Remedy: " + remedy.NotAJobDirRemedy}, []string{"job.json"}},
		{"show of a status from a newer jobstore", func(t *testing.T) result {
			return runCLI(t, "show", filepath.Join(brokenRoot, "status-newer"))
		}, exitRuntime, []string{"jobstore: read status ", "written by a newer jobstore (schema_version 3); this version understands up to 2",
			"Remedy: upgrade jobstore ('jobstore --version' shows this one)"}, []string{"migrate"}},
		{"cancel of a finished job", func(t *testing.T) result {
			dir := clitest.RunJob(t, testdir.New(t), "done", jobstore.Outcome{State: jobstore.Succeeded})
			return runCLI(t, "cancel", string(dir))
		}, exitUnsuccessful, []string{"the job is already succeeded; a finished job cannot be cancelled", "Remedy: nothing to cancel: the job has ended ('jobstore show "},
			[]string{"Finish(", "RequestCancel"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.run(t)
			requireCode(t, r, tc.code)
			out := r.stderr + r.stdout
			for _, s := range tc.says {
				require.Contains(t, out, s)
			}
			for _, s := range tc.not {
				require.NotContains(t, out, s)
			}
		})
	}
}
