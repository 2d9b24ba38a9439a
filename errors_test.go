package jobstore_test

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var sentinels = map[string]error{
	"ErrNotJob":          jobstore.ErrNotJob,
	"ErrExists":          jobstore.ErrExists,
	"ErrCorrupt":         jobstore.ErrCorrupt,
	"ErrTooLarge":        jobstore.ErrTooLarge,
	"ErrInvalid":         jobstore.ErrInvalid,
	"ErrWrongState":      jobstore.ErrWrongState,
	"ErrNewerSchema":     jobstore.ErrNewerSchema,
	"ErrNoMigration":     jobstore.ErrNoMigration,
	"ErrLocked":          jobstore.ErrLocked,
	"ErrCancelRequested": jobstore.ErrCancelRequested,
	"ErrNotRegular":      jobstore.ErrNotRegular,
	"ErrNotOwner":        jobstore.ErrNotOwner,
	"ErrNotDue":          jobstore.ErrNotDue,
}

// oneSentence is the shape of Error(): "jobstore: ", then one line that ends
// in a sentence, then ". Remedy: " and the remedy.
var oneSentence = regexp.MustCompile(`^jobstore: [^\n]*[^.\s]\. Remedy: [^\n]*[^.\s]$`)

// failWith returns a real error of each kind, from the public API.
func failWith(t *testing.T, name string) error {
	t.Helper()
	switch name {
	case "ErrNotJob":
		_, err := jobstore.ReadSpec(newJobDir(t, "missing"))
		return err
	case "ErrExists":
		dir := newJob(t, "twice")
		return jobstore.WriteSpec(dir, jobstore.JobSpec{ID: "twice", Kind: "k"})
	case "ErrCorrupt":
		dir := newJob(t, "corrupt")
		writeFile(t, dir.StatusPath(), []byte("{}{}"))
		_, err := jobstore.ReadStatus(dir, jobstore.WithRetries(1, 0))
		return err
	case "ErrTooLarge":
		dir := newJob(t, "large")
		_, err := jobstore.ReadSpec(dir, jobstore.WithMaxSize(10))
		return err
	case "ErrInvalid":
		return jobstore.WriteStatus(newJob(t, "invalid"), jobstore.JobStatus{State: "finished"})
	case "ErrWrongState":
		dir := newJob(t, "finished")
		run, err := jobstore.Start(dir)
		require.NoError(t, err)
		require.NoError(t, run.Finish(jobstore.Outcome{State: jobstore.Succeeded}))
		require.NoError(t, run.Close())
		_, err = jobstore.Start(dir)
		return err
	case "ErrNewerSchema":
		dir := newJob(t, "j1")
		writeFile(t, dir.StatusPath(), readFile(t, filepath.Join("testdata", "status.newer.json")))
		_, err := jobstore.ReadStatus(dir)
		return err
	case "ErrNoMigration":
		dir := newJob(t, "old-job")
		writeFile(t, dir.StatusPath(), readFile(t, filepath.Join("testdata", "status.v0.json")))
		_, err := jobstore.ReadStatus(dir)
		return err
	case "ErrLocked":
		dir := newJob(t, "held")
		lk, err := jobstore.LockJob(dir)
		require.NoError(t, err)
		t.Cleanup(func() { _ = lk.Unlock() })
		_, err = jobstore.LockJob(dir)
		return err
	case "ErrNotRegular":
		dir := newJob(t, "status-is-a-directory")
		require.NoError(t, os.Mkdir(dir.StatusPath(), 0o755))
		_, err := jobstore.ReadStatus(dir)
		return err
	case "ErrNotOwner":
		dir := newJob(t, "taken-over")
		run, err := jobstore.Start(dir)
		require.NoError(t, err)
		t.Cleanup(func() { _ = run.Close() })
		// What a fence by another host does: the attempt's directory is renamed away.
		require.NoError(t, os.Rename(jobstore.RunDirPath(dir, 1), jobstore.FencedDirPath(dir, 1)))
		return run.SetMessage("after the fence")
	case "ErrNotDue":
		dir, err := jobstore.Submit(tempDir(t), jobstore.JobSpec{ID: "tomorrow", Kind: "test", NotBefore: time.Now().Add(24 * time.Hour)})
		require.NoError(t, err)
		_, err = jobstore.Start(dir)
		return err
	case "ErrCancelRequested":
		dir := newJob(t, "cancelled-before-start")
		require.NoError(t, jobstore.RequestCancel(dir, jobstore.CancelRequest{Reason: "not needed"}))
		run, err := jobstore.Start(dir)
		require.Nil(t, run)
		return err
	}
	t.Fatalf("no way to fail with %s", name)
	return nil
}

func TestErrors_EachFailureMatchesItsSentinelAndNoOther(t *testing.T) {
	for name, sentinel := range sentinels {
		t.Run(name, func(t *testing.T) {
			err := failWith(t, name)
			require.Error(t, err)
			for other, s := range sentinels {
				assert.Equal(t, other == name, errors.Is(err, s), "errors.Is(%s error, %s)", name, other)
			}
			assert.Equal(t, name == "ErrNotJob", errors.Is(err, fs.ErrNotExist), "fs.ErrNotExist")
			assert.Equal(t, name == "ErrExists", errors.Is(err, fs.ErrExist), "fs.ErrExist")
			e := errOf(t, err)
			assert.Equal(t, sentinel, e.Sentinel)
			assert.NotEmpty(t, e.Op)
			assert.NotEmpty(t, e.Path)
			assert.Contains(t, err.Error(), e.Path)
			assert.NotEmpty(t, e.Remedy)
			assert.Regexp(t, oneSentence, err.Error())
		})
	}
}

func TestErrors_SentinelsStandForTheStandardErrors(t *testing.T) {
	assert.ErrorIs(t, jobstore.ErrNotJob, fs.ErrNotExist)
	assert.ErrorIs(t, jobstore.ErrExists, fs.ErrExist)
	assert.NotErrorIs(t, jobstore.ErrNotJob, fs.ErrExist)
	assert.NotErrorIs(t, jobstore.ErrExists, fs.ErrNotExist)
	for name, s := range sentinels {
		assert.True(t, strings.HasPrefix(s.Error(), "jobstore: "), name)
		assert.NotErrorIs(t, s, fs.ErrPermission, name)
		if name != "ErrNotJob" && name != "ErrExists" {
			assert.NotErrorIs(t, s, fs.ErrNotExist, name)
			assert.NotErrorIs(t, s, fs.ErrExist, name)
		}
	}
}

func TestErrors_NewerSchemaCarriesBothVersions(t *testing.T) {
	err := failWith(t, "ErrNewerSchema")
	var e *jobstore.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, 3, e.Found)
	assert.Equal(t, jobstore.StatusSchemaVersion, e.Supported)
	assert.Equal(t, "schema_version", e.Subject)
	assert.Contains(t, err.Error(), "written by a newer jobstore (schema_version 3); this version understands up to 2")
	assert.Contains(t, err.Error(), filepath.Join("j1", "status.json"))
	assert.True(t, strings.HasPrefix(err.Error(), "jobstore: read status "), "the error opens with what the caller did, not with a migration: %v", err)
	assert.NotContains(t, err.Error(), "migrate")
}

func TestErrors_InvalidCarriesFieldAndValue(t *testing.T) {
	err := failWith(t, "ErrInvalid")
	var e *jobstore.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, "state", e.Subject)
	assert.Equal(t, "finished", e.Found)
	assert.Equal(t, jobstore.States(), e.Supported)
}

func TestError_UnwrapReturnsTheCause(t *testing.T) {
	cause := io.ErrUnexpectedEOF
	e := &jobstore.Error{Op: "read", Err: cause}
	assert.Equal(t, cause, errors.Unwrap(e))
	assert.ErrorIs(t, e, io.ErrUnexpectedEOF)
	assert.Nil(t, (&jobstore.Error{Op: "x"}).Unwrap())
	assert.NotErrorIs(t, &jobstore.Error{Op: "x"}, jobstore.ErrInvalid, "no kind matches no sentinel")
}

func TestError_TextReadsAsOneSentenceThenTheRemedy(t *testing.T) {
	tests := []struct {
		name string
		err  *jobstore.Error
		want string
	}{
		{"everything", &jobstore.Error{Op: "read status", Path: "/r/j1/status.json", Subject: "schema_version",
			Msg: "written by a newer jobstore (schema_version 3); this version understands up to 1", Remedy: "upgrade jobstore"},
			"jobstore: read status /r/j1/status.json: schema_version: written by a newer jobstore (schema_version 3); this version understands up to 1. Remedy: upgrade jobstore"},
		{"with a cause", &jobstore.Error{Op: "write", Path: "/r/j1/.status.json123", Msg: "cannot write the temp file", Err: io.ErrShortWrite, Remedy: "retry"},
			"jobstore: write /r/j1/.status.json123: cannot write the temp file: short write. Remedy: retry"},
		{"message from the kind", &jobstore.Error{Op: "read spec", Path: "/r/x", Sentinel: jobstore.ErrNotJob, Remedy: "check the path"},
			"jobstore: read spec /r/x: not a job directory. Remedy: check the path"},
		{"no remedy", &jobstore.Error{Op: "fsync", Path: "/r/x", Err: io.EOF},
			"jobstore: fsync /r/x: EOF"},
		{"a cause that ends with a period, as Windows' do", &jobstore.Error{Op: "publish", Path: `C:\r\j1\job.json`,
			Msg: "already exists", Err: errors.New("File already exists."), Remedy: "read the existing record"},
			`jobstore: publish C:\r\j1\job.json: already exists: File already exists. Remedy: read the existing record`},
		{"no op", &jobstore.Error{Subject: "progress", Msg: "1.5 is not within [0, 1]", Remedy: "correct the progress field"},
			"jobstore: progress: 1.5 is not within [0, 1]. Remedy: correct the progress field"},
		{"a kind from elsewhere", &jobstore.Error{Op: "read", Sentinel: io.EOF},
			"jobstore: read: EOF"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.err.Error())
		})
	}
}

// TestDecodeErrors_ReadAsOneSentence: the pure decoders have no file and no
// operation to name; their errors still read cleanly.
func TestDecodeErrors_ReadAsOneSentence(t *testing.T) {
	for _, data := range []string{"", "{}{}", "garbage", `{"schema_version": 3}`, `{"state": "queued"}`,
		`{"schema_version": 1, "state": "x", "updated_at": "2026-01-01T00:00:00Z"}`, `{"schema_version": 1, "seq": -1}`} {
		_, _, err := jobstore.DecodeStatus([]byte(data))
		require.Error(t, err, data)
		assert.Regexp(t, oneSentence, err.Error(), data)
		assert.NotContains(t, err.Error(), ": :", data)
		_, _, err = jobstore.DecodeSpec([]byte(data))
		require.Error(t, err, data)
		assert.Regexp(t, oneSentence, err.Error(), data)
		assert.NotContains(t, err.Error(), ": :", data)
	}
}

// TestErrors_PlainIOFailuresHaveARemedyToo: failures of no particular kind
// (here a job "directory" that is a regular file) still end with a remedy.
func TestErrors_PlainIOFailuresHaveARemedyToo(t *testing.T) {
	file := filepath.Join(tempDir(t), "file")
	writeFile(t, file, []byte("x"))
	dir := jobstore.JobDir(file)
	_, errStatus := jobstore.ReadStatus(dir)
	_, errSpec := jobstore.ReadSpec(dir)
	errs := []error{errStatus, errSpec}
	if runtime.GOOS != "windows" { // Windows calls a path through a file "not found": (false, nil)
		var v any
		_, errRead := jobstore.ReadJSONTolerant(filepath.Join(file, "x.json"), &v)
		errs = append(errs, errRead)
	}
	for _, err := range append(errs,
		jobstore.WriteStatus(dir, jobstore.JobStatus{State: jobstore.Queued}),
		jobstore.WriteSpec(dir, jobstore.JobSpec{ID: "file", Kind: "k"}),
		jobstore.WriteJSONAtomic(filepath.Join(file, "x.json"), 1),
	) {
		e := errOf(t, err)
		assert.NotEmpty(t, e.Remedy, "%v", err)
		assert.Regexp(t, oneSentence, err.Error())
	}
}

func TestErrorCode_NamesTheKindOfEachFailure(t *testing.T) {
	// The codes are what scripts match in the CLI's JSON output: pinned here.
	want := map[string]string{
		"ErrNotJob": "not_job", "ErrExists": "exists", "ErrCorrupt": "corrupt", "ErrTooLarge": "too_large",
		"ErrInvalid": "invalid", "ErrWrongState": "wrong_state", "ErrNewerSchema": "newer_schema", "ErrNoMigration": "no_migration", "ErrLocked": "locked",
		"ErrCancelRequested": "cancel_requested", "ErrNotRegular": "not_regular", "ErrNotOwner": "not_owner",
		"ErrNotDue": "not_due",
	}
	require.Len(t, want, len(sentinels))
	for name := range sentinels {
		t.Run(name, func(t *testing.T) {
			err := failWith(t, name)
			code := jobstore.Code(want[name])
			assert.Equal(t, code, jobstore.ErrorCode(err))
			assert.Equal(t, code, jobstore.ErrorCode(sentinels[name]), "the bare sentinel")
			assert.Equal(t, code, jobstore.ErrorCode(fmt.Errorf("while polling: %w", err)), "wrapped")
			assert.Equal(t, code, jobstore.ErrorCode(errors.Join(io.EOF, err)), "joined")
		})
	}
}

func TestErrorCode_AnythingElseIsIO(t *testing.T) {
	_, osErr := os.Open(filepath.Join(tempDir(t), "missing"))
	for name, err := range map[string]error{
		"an OS error":                  osErr,
		"an *Error with no sentinel":   &jobstore.Error{Op: "fsync", Err: io.ErrShortWrite},
		"an *Error with a foreign one": &jobstore.Error{Op: "read", Sentinel: io.EOF},
		"fs.ErrNotExist itself":        fs.ErrNotExist, // ErrNotJob stands for it, not the other way round
	} {
		assert.Equal(t, jobstore.CodeIO, jobstore.ErrorCode(err), name)
	}
	assert.Equal(t, jobstore.Code(""), jobstore.ErrorCode(nil))
}

// TestErrorCode_AContextEndIsTimeoutOrInterrupted: StartNext and Wait
// ended by the caller's context are "timeout" (its deadline) or
// "interrupted" (cancelled), never "io", and still match the context's
// error; a sentinel in the same tree wins.
func TestErrorCode_AContextEndIsTimeoutOrInterrupted(t *testing.T) {
	deadline := func() context.Context {
		ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
		t.Cleanup(cancel)
		<-ctx.Done()
		return ctx
	}
	cancelled := func() context.Context {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		return ctx
	}
	calls := map[string]func(ctx context.Context) error{
		"StartNext": func(ctx context.Context) error {
			_, err := jobstore.StartNext(ctx, tempDir(t))
			return err
		},
		"Wait": func(ctx context.Context) error {
			_, err := jobstore.Wait(ctx, submitJob(t, "j"))
			return err
		},
	}
	for name, call := range calls {
		t.Run(name+"/deadline", func(t *testing.T) {
			err := call(deadline())
			require.ErrorIs(t, err, context.DeadlineExceeded)
			assert.Equal(t, jobstore.CodeTimeout, jobstore.ErrorCode(err), "%v", err)
			errOf(t, err)
		})
		t.Run(name+"/cancelled", func(t *testing.T) {
			err := call(cancelled())
			require.ErrorIs(t, err, context.Canceled)
			assert.Equal(t, jobstore.CodeInterrupted, jobstore.ErrorCode(err), "%v", err)
		})
	}
	assert.Equal(t, jobstore.CodeLocked, jobstore.ErrorCode(errors.Join(context.Canceled, failWith(t, "ErrLocked"))), "a sentinel wins")
}

// textClassified lists where the Go file at path tells errors apart by
// their text: a field of an *Error that holds words (Subject, Msg,
// Remedy) compared with, or switched on, a string; an error's Error()
// text, or such a field, searched (strings.Contains, HasPrefix, ...) or
// matched by a regular expression; ErrorCode compared with, or switched
// on, a string literal instead of a Code constant. Each is a position and
// what was found. Searching an error's text is allowed in tests, which
// check that a message says what it should.
func textClassified(t *testing.T, fset *token.FileSet, path string) []string {
	t.Helper()
	f, err := parser.ParseFile(fset, path, nil, 0)
	require.NoError(t, err)
	var found []string
	report := func(n ast.Node, what string) {
		found = append(found, fset.Position(n.Pos()).String()+": "+what)
	}
	isWordField := func(e ast.Expr) bool {
		s, ok := e.(*ast.SelectorExpr)
		return ok && (s.Sel.Name == "Subject" || s.Sel.Name == "Msg" || s.Sel.Name == "Remedy")
	}
	isErrorText := func(e ast.Expr) bool {
		c, ok := e.(*ast.CallExpr)
		if !ok || len(c.Args) != 0 {
			return false
		}
		s, ok := c.Fun.(*ast.SelectorExpr)
		return ok && s.Sel.Name == "Error"
	}
	isErrorCode := func(e ast.Expr) bool {
		c, ok := e.(*ast.CallExpr)
		if !ok {
			return false
		}
		switch fn := c.Fun.(type) {
		case *ast.Ident:
			return fn.Name == "ErrorCode"
		case *ast.SelectorExpr:
			return fn.Sel.Name == "ErrorCode"
		}
		return false
	}
	isString := func(e ast.Expr) bool { // a string literal, not "" (a check for emptiness)
		b, ok := e.(*ast.BasicLit)
		return ok && b.Kind == token.STRING && b.Value != `""` && b.Value != "``"
	}
	// searches are the functions of package strings and the methods of
	// *regexp.Regexp that look for text in a string (assertions of tests,
	// assert.Contains(t, err.Error(), ...), check a message; they do not
	// classify).
	searches := map[string]bool{"Contains": true, "HasPrefix": true, "HasSuffix": true, "Index": true, "EqualFold": true,
		"Cut": true, "MatchString": true, "FindString": true, "FindStringSubmatch": true, "FindAllString": true,
		"FindStringIndex": true, "FindAllStringSubmatch": true, "FindAllStringIndex": true}
	isSearch := func(fn ast.Expr) (string, bool) {
		s, ok := fn.(*ast.SelectorExpr)
		if !ok || !searches[s.Sel.Name] {
			return "", false
		}
		if id, ok := s.X.(*ast.Ident); ok && (id.Name == "assert" || id.Name == "require" || id.Name == "t") {
			return "", false
		}
		return s.Sel.Name, true
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BinaryExpr:
			if n.Op != token.EQL && n.Op != token.NEQ {
				return true
			}
			for _, pair := range [][2]ast.Expr{{n.X, n.Y}, {n.Y, n.X}} {
				switch {
				case isWordField(pair[0]) && isString(pair[1]):
					report(n, "a field of words compared with a string")
				case isErrorCode(pair[0]) && isString(pair[1]):
					report(n, "ErrorCode compared with a string literal, not a Code constant")
				case isErrorText(pair[0]) && isString(pair[1]):
					report(n, "an error's text compared with a string")
				}
			}
		case *ast.SwitchStmt:
			if n.Tag == nil || !(isWordField(n.Tag) || isErrorCode(n.Tag) || isErrorText(n.Tag)) {
				return true
			}
			for _, c := range n.Body.List {
				for _, e := range c.(*ast.CaseClause).List {
					if isString(e) {
						report(e, "a switch on an error's words or code with a string case")
					}
				}
			}
		case *ast.CallExpr:
			name, ok := isSearch(n.Fun)
			if !ok || strings.HasSuffix(path, "_test.go") { // a test may look for the words it expects
				return true
			}
			for _, a := range n.Args {
				if isErrorText(a) || isWordField(a) {
					report(n, name+" on an error's text")
				}
			}
		}
		return true
	})
	return found
}

// No code of the module tells errors apart by their text: a kind is a
// sentinel (errors.Is), a type (errors.As) or a Code constant, so that a
// reworded message or remedy changes no behaviour. The module's Go files
// are read, tests included (where an error's text may be searched for the
// words a message should hold), but for the few that state why they must.
func TestModule_ClassifiesNoErrorByItsText(t *testing.T) {
	// allowed are the files that must read an error's text, and why.
	allowed := map[string]string{
		// Plan 9's system errors are strings (syscall.ErrorString): no errno to match.
		filepath.Join("cmd", "jobstore", "internal", "remedy", "diskfull_plan9.go"): "Plan 9's errors are text",
	}
	fset := token.NewFileSet()
	var found []string
	files := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || path == "errors_test.go" {
			return nil
		}
		files++
		if _, ok := allowed[path]; ok {
			return nil
		}
		found = append(found, textClassified(t, fset, path)...)
		return nil
	})
	require.NoError(t, err)
	require.Greater(t, files, 300, "the module's Go files were not all read")
	require.Empty(t, found, "errors classified by their text ("+strconv.Itoa(len(found))+"); use errors.Is with a sentinel, errors.As, or a Code constant")
}

// A job directory that does not exist is said to be missing, and one that
// exists without job.json to hold none: both are ErrNotJob (and
// fs.ErrNotExist), whatever the call.
func TestNotJob_SaysWhetherTheDirectoryIsMissingOrHoldsNoJob(t *testing.T) {
	calls := map[string]func(dir jobstore.JobDir) error{
		"ReadStatus": func(dir jobstore.JobDir) error { _, err := jobstore.ReadStatus(dir); return err },
		"ReadSpec":   func(dir jobstore.JobDir) error { _, err := jobstore.ReadSpec(dir); return err },
		"Remove":     func(dir jobstore.JobDir) error { return jobstore.Remove(dir) },
		"Start":      func(dir jobstore.JobDir) error { _, err := jobstore.Start(dir); return err },
		"Retry":      func(dir jobstore.JobDir) error { return jobstore.Retry(dir) },
		"RequestCancel": func(dir jobstore.JobDir) error {
			return jobstore.RequestCancel(dir, jobstore.CancelRequest{})
		},
		"Wait": func(dir jobstore.JobDir) error {
			_, err := jobstore.Wait(context.Background(), dir)
			return err
		},
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			root := tempDir(t)
			missing := jobstore.JobDir(filepath.Join(root, "missing"))
			err := call(missing)
			require.ErrorIs(t, err, jobstore.ErrNotJob)
			require.ErrorIs(t, err, fs.ErrNotExist)
			assert.Contains(t, err.Error(), string(missing)+": no such directory")
			assert.NotContains(t, err.Error(), "job.json")

			empty := jobstore.JobDir(filepath.Join(root, "empty"))
			require.NoError(t, os.Mkdir(string(empty), 0o755))
			err = call(empty)
			require.ErrorIs(t, err, jobstore.ErrNotJob)
			assert.Contains(t, err.Error(), "no job.json here")
		})
	}
}

// Wait's errors name the wait, never the Watch it is built on: here a
// directory whose status.json cannot be read (which a wait would sit out)
// and that holds no job.json.
func TestWait_ErrorsNameTheWait(t *testing.T) {
	dir := newJobDir(t, "j")
	require.NoError(t, os.MkdirAll(string(dir), 0o755))
	writeFile(t, dir.StatusPath(), []byte("{"))
	_, err := jobstore.Wait(context.Background(), dir)
	require.ErrorIs(t, err, jobstore.ErrNotJob)
	assert.True(t, strings.HasPrefix(err.Error(), "jobstore: wait "+string(dir)+":"), "%v", err)
	assert.NotContains(t, err.Error(), "watch")
}
