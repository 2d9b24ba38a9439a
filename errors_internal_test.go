package jobstore

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSentinels_EveryOneHasAStableCode reads the package's source for every
// sentinel literal and every Code constant, so that a sentinel added
// without a code, or without a row here, fails (ErrorCode would otherwise
// call it "io"), and so does a constant that Codes leaves out.
func TestSentinels_EveryOneHasAStableCode(t *testing.T) {
	pinned := map[string]struct {
		err  error
		code string
	}{
		"ErrNotJob":          {ErrNotJob, "not_job"},
		"ErrExists":          {ErrExists, "exists"},
		"ErrCorrupt":         {ErrCorrupt, "corrupt"},
		"ErrTooLarge":        {ErrTooLarge, "too_large"},
		"ErrInvalid":         {ErrInvalid, "invalid"},
		"ErrWrongState":      {ErrWrongState, "wrong_state"},
		"ErrNewerSchema":     {ErrNewerSchema, "newer_schema"},
		"ErrNoMigration":     {ErrNoMigration, "no_migration"},
		"ErrLocked":          {ErrLocked, "locked"},
		"ErrCancelRequested": {ErrCancelRequested, "cancel_requested"},
		"ErrNotRegular":      {ErrNotRegular, "not_regular"},
		"ErrNotOwner":        {ErrNotOwner, "not_owner"},
		"ErrNotDue":          {ErrNotDue, "not_due"},
	}
	codeShape := regexp.MustCompile(`^[a-z]+(_[a-z]+)*$`)
	consts := map[string]string{} // constant name -> its code, for every Code constant
	found := map[string]string{}  // variable name -> the constant its literal starts with
	fset := token.NewFileSet()
	entries, err := os.ReadDir(".")
	require.NoError(t, err)
	for _, de := range entries {
		name := de.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		require.NoError(t, err)
		ast.Inspect(f, func(n ast.Node) bool {
			spec, ok := n.(*ast.ValueSpec)
			if !ok {
				if lit, ok := n.(*ast.CompositeLit); ok && isSentinelType(lit.Type) {
					t.Errorf("%s: a sentinel literal outside a var declaration", fset.Position(lit.Pos()))
				}
				return true
			}
			if id, ok := spec.Type.(*ast.Ident); ok && id.Name == "Code" {
				for i, v := range spec.Values {
					b, ok := v.(*ast.BasicLit)
					require.True(t, ok && b.Kind == token.STRING, "%s: a Code constant that is not a string literal", fset.Position(v.Pos()))
					consts[spec.Names[i].Name], _ = strconv.Unquote(b.Value)
				}
				return false
			}
			for i, v := range spec.Values {
				lit := sentinelLit(v)
				if lit == nil {
					continue
				}
				code := ""
				if len(lit.Elts) > 0 {
					if id, ok := lit.Elts[0].(*ast.Ident); ok {
						code = id.Name
					}
				}
				found[spec.Names[i].Name] = code
			}
			return false
		})
	}
	require.NotEmpty(t, found, "the parser found no sentinel at all")
	codes := map[string]string{}
	for name, constant := range found {
		code, ok := consts[constant]
		if !assert.True(t, ok, "%s: its first field must be a Code constant, not %q", name, constant) {
			continue
		}
		assert.Regexp(t, codeShape, code, name)
		if other, dup := codes[code]; dup {
			t.Errorf("%s and %s share the code %q", name, other, code)
		}
		codes[code] = name
		p, ok := pinned[name]
		if !assert.True(t, ok, "%s has no pinned code here: add it (codes are API)", name) {
			continue
		}
		assert.Equal(t, p.code, code, name)
		assert.Equal(t, Code(p.code), ErrorCode(p.err), name)
	}
	assert.Len(t, found, len(pinned), "a pinned sentinel is gone from the source")

	listed := map[Code]bool{}
	for _, c := range Codes() {
		assert.False(t, listed[c], "Codes lists %q twice", c)
		listed[c] = true
	}
	require.Contains(t, consts, "CodeIO", "the Code constants were not read")
	for name, code := range consts {
		assert.True(t, listed[Code(code)], "Codes leaves out %s", name)
	}
	assert.Len(t, listed, len(consts), "Codes lists a code that is no constant")
}

func isSentinelType(e ast.Expr) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == "sentinel"
}

// sentinelLit returns the &sentinel{...} literal e is, or nil.
func sentinelLit(e ast.Expr) *ast.CompositeLit {
	if u, ok := e.(*ast.UnaryExpr); ok && u.Op == token.AND {
		e = u.X
	}
	if lit, ok := e.(*ast.CompositeLit); ok && isSentinelType(lit.Type) {
		return lit
	}
	return nil
}

func TestAnnotated_ChangesACopyNeverTheError(t *testing.T) {
	orig := errInvalid("", "", invalid{subject: "progress", found: 1.5, supported: "a number within [0, 1]", msg: "1.5 is not within [0, 1]"})
	before := *orig
	got := withPath(orig, "read status", "/r/j1/status.json")
	assert.Equal(t, before, *orig, "the error handed in is unchanged")
	var e *Error
	require.ErrorAs(t, got, &e)
	assert.NotSame(t, orig, e)
	assert.Equal(t, "read status", e.Op)
	assert.Equal(t, "/r/j1/status.json", e.Path)
	assert.ErrorIs(t, got, ErrInvalid)

	named := errIO("fsync", "/r/j1/status.json", os.ErrClosed, "cannot sync", "retry")
	assert.Equal(t, "/r/j1/status.json", withPath(named, "read", "/elsewhere").(*Error).Path, "a path already named stays")

	plain := os.ErrClosed
	wrapped := withPath(plain, "read", "/p")
	assert.ErrorIs(t, wrapped, ErrInvalid, "a foreign decode error becomes ErrInvalid")
	assert.ErrorIs(t, wrapped, os.ErrClosed, "and wraps its cause")
}

// TestConstructors_EachBuildsItsKind: every constructor gives its sentinel
// (or none, for I/O), the code the CLI prints, the fields it was handed,
// and a message that reads as one sentence ending in a remedy.
func TestConstructors_EachBuildsItsKind(t *testing.T) {
	const path = "/r/j1/status.json"
	cause := os.ErrClosed
	tests := []struct {
		name     string
		err      *Error
		sentinel error
		code     Code
	}{
		{"errNotJob", errNotJob("read spec", JobDir("/r/j1")), ErrNotJob, "not_job"},
		{"errExists", errExists("publish", path, cause), ErrExists, "exists"},
		{"errCorrupt", errCorrupt(7, cause, "the file is empty", "restore it"), ErrCorrupt, "corrupt"},
		{"errTooLarge", errTooLarge("read", path, 20, 10), ErrTooLarge, "too_large"},
		{"errInvalid", errInvalid("write status", path, invalid{subject: "progress", found: 1.5, supported: "[0, 1]", msg: "1.5 is not within [0, 1]"}), ErrInvalid, "invalid"},
		{"errMalformed", errMalformed("marshal", path, "status", cause, "cannot encode", "pass a value"), ErrInvalid, "invalid"},
		{"errNewerSchema", errNewerSchema("migrate status.json", 3, 1), ErrNewerSchema, "newer_schema"},
		{"errNoMigration", errNoMigration("migrate status.json", 0, 1, nil), ErrNoMigration, "no_migration"},
		{"errNoMigration, failed step", errNoMigration("migrate status.json", 0, 1, cause), ErrNoMigration, "no_migration"},
		{"errWrongState", errWrongState("start", path, invalid{found: "succeeded", msg: "the job is already succeeded", remedy: "submit a new job"}), ErrWrongState, "wrong_state"},
		{"errLocked", errLocked("lock", "/r/j1/job.lock", "held by pid 7"), ErrLocked, "locked"},
		{"errIO", errIO("fsync", path, &fs.PathError{Op: "sync", Path: path, Err: cause}, "cannot sync", "check the disk"), nil, "io"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.sentinel, tt.err.Sentinel)
			assert.Equal(t, tt.code, ErrorCode(tt.err))
			assert.NotEmpty(t, tt.err.Remedy)
			assert.Regexp(t, `^jobstore: [^\n]*[^.\s]\. Remedy: [^\n]*[^.\s]$`, tt.err.Error())
		})
	}
	assert.Equal(t, cause, errIO("fsync", path, &fs.PathError{Op: "sync", Path: path, Err: cause}, "m", "r").Err,
		"errIO unwraps a *fs.PathError: the path is in the *Error already")
	assert.Equal(t, "correct the progress field", tests[4].err.Remedy, "errInvalid's default remedy")
	assert.Equal(t, 1.5, tests[4].err.Found)
	assert.ErrorIs(t, tests[8].err, cause, "a failed step is wrapped")
	assert.Equal(t, 0, tests[8].err.Found)
	assert.Equal(t, 1, tests[8].err.Supported)
}

// TestStepError_PermissionNamesWhatIsMissing: a write refused for want of
// permission says which permission, where, and how a shared root is set
// up; other causes keep the protocol's remedy; a step's own remedy stays.
func TestStepError_PermissionNamesWhatIsMissing(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cause  error
		remedy string
		want   []string
		not    []string
	}{
		{"EACCES", syscall.EACCES, "", []string{"the previous record is intact", "write permission on the job directory", "setgid", "umask 002"}, []string{"free space"}},
		{"EPERM", syscall.EPERM, "", []string{"write permission on the job directory"}, []string{"free space"}},
		{"another cause", errors.New("no space left on device"), "", []string{"the previous record is intact", "free space"}, []string{"setgid"}},
		{"a step's own remedy", syscall.EACCES, "nothing was removed; try again", []string{"nothing was removed"}, []string{"setgid"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := stepError("write cancel", "/r/j/cancel.json", tc.cause, "cannot create the temp file", tc.remedy)
			require.ErrorIs(t, err, tc.cause)
			for _, w := range tc.want {
				assert.Contains(t, err.Remedy, w)
			}
			for _, n := range tc.not {
				assert.NotContains(t, err.Remedy, n)
			}
		})
	}
}

// TestStateRefusals_AreTheSentinelNotTheField: StartNext's passedOver and
// the claimers' lostClaim take a job whose state refuses them
// (ErrWrongState) for one that ended meanwhile, and nothing else: a record
// whose state field is unreadable (ErrInvalid, Subject "state") is a fault
// of the job's own, reported, though it names the same field.
func TestStateRefusals_AreTheSentinelNotTheField(t *testing.T) {
	const path = "/r/j1/status.json"
	refusal := errWrongState("start", path, invalid{found: "succeeded", msg: "the job is already succeeded"})
	unknown := errInvalid("read status", path, invalid{subject: "state", found: "done", msg: `"done" is not a known state`})
	for _, tc := range []struct {
		name    string
		err     error
		refusal bool
	}{
		{"the job's state refuses", refusal, true},
		{"wrapped", fmt.Errorf("start: %w", refusal), true},
		{"an unknown state read", unknown, false},
		{"an unknown state, wrapped", fmt.Errorf("start: %w", unknown), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.refusal, passedOver(tc.err), "passedOver")
			assert.Equal(t, tc.refusal, lostClaim(tc.err), "lostClaim")
		})
	}
}
