package main

import (
	"debug/buildinfo"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/internal/testdir"
	"github.com/stretchr/testify/require"
)

func TestHelp_PrintsUsageAndExitCodes(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		r := runCLI(t, args...)
		requireCode(t, r, exitOK)
		require.Empty(t, r.stderr)
		golden(t, "help.golden", r.stdout)
	}
}

func TestHelp_EachCommandHasUsage(t *testing.T) {
	for _, c := range commands() {
		t.Run(c.name, func(t *testing.T) {
			viaHelp := runCLI(t, "help", c.name)
			requireCode(t, viaHelp, exitOK)
			viaFlag := runCLI(t, c.name, "--help")
			requireCode(t, viaFlag, exitOK)
			require.Equal(t, viaHelp.stdout, viaFlag.stdout)
			require.True(t, strings.HasPrefix(viaHelp.stdout, "Usage: jobstore "+c.name), viaHelp.stdout)
			require.Contains(t, viaHelp.stdout, "Exit codes:")
			golden(t, "help_"+c.name+".golden", viaHelp.stdout)
		})
	}
}

func TestUsageErrors_ExitTwoWithOneLine(t *testing.T) {
	root := testdir.New(t)
	for _, tc := range []struct {
		name string
		args []string
		want string // in the one stderr line
	}{
		{"unknown command", []string{"frobnicate"}, `unknown command "frobnicate"`},
		{"help for unknown command", []string{"help", "frobnicate"}, `no command "frobnicate"`},
		{"missing ROOT", []string{"list"}, "missing ROOT"},
		{"extra argument", []string{"list", root, "other"}, `unexpected argument "other"`},
		{"unknown flag", []string{"list", root, "--colour"}, "unknown flag --colour"},
		{"submit without kind", []string{"submit", root}, "--kind is required"},
		{"submit with bad params", []string{"submit", root, "--kind", "k", "--params", "{oops"}, "not valid JSON"},
		{"submit with missing params file", []string{"submit", root, "--kind", "k", "--params", "@" + filepath.Join(root, "nope.json")}, "--params"},
		{"submit with bad label", []string{"submit", root, "--kind", "k", "--label", "novalue"}, "not KEY=VALUE"},
		{"submit with repeated label", []string{"submit", root, "--kind", "k", "--label", "a=1", "--label", "a=2"}, `label "a" given twice`},
		{"submit with bad id", []string{"submit", root, "--kind", "k", "--id", "../escape"}, "--id"},
		{"watch with zero interval", []string{"watch", root, "--interval", "0s"}, "--interval must be positive"},
		{"demo with two roots", []string{"demo", root, root}, "unexpected argument"},
		{"list --oldest with --newest", []string{"list", root, "--oldest", "--newest"}, "--oldest cannot be combined with --newest"},
		{"list with an unknown state", []string{"list", root, "--state", "runing"}, `--state: unknown state "runing"`},
		{"list with a negative limit", []string{"list", root, "--limit", "-1"}, "--limit must not be negative"},
		{"logs --interval without --follow", []string{"logs", root, "--interval", "1s"}, "--interval applies only with --follow"},
		{"list --watch with --rebuild", []string{"list", root, "-watch", "--rebuild"}, "-watch cannot be combined with --rebuild"},
		{"list --interval without --watch", []string{"list", root, "--interval", "1s"}, "--interval applies only with --watch"},
		{"list --watch with zero interval", []string{"list", root, "--watch", "--interval", "0s"}, "--interval must be positive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runCLI(t, tc.args...)
			requireCode(t, r, exitUsage)
			requireErrorLine(t, r)
			require.Contains(t, r.stderr, tc.want)
			require.Empty(t, r.stdout)
		})
	}
}

func TestNoArguments_PrintsUsageToStderrAndExitsTwo(t *testing.T) {
	r := runCLI(t)
	requireCode(t, r, exitUsage)
	require.Empty(t, r.stdout)
	require.Contains(t, r.stderr, "Exit codes:")
}

func TestRuntimeErrors_ExitThreeWithOneLine(t *testing.T) {
	root := testdir.New(t)
	missing := filepath.Join(root, "no-such-job")
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"show a missing job", []string{"show", missing}},
		{"show --json a missing job", []string{"show", missing, "--json"}},
		{"watch a missing job", []string{"watch", missing}},
		{"check a missing directory", []string{"check", missing}},
		{"list a missing root", []string{"list", missing}},
		{"reconcile a missing root", []string{"reconcile", missing}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runCLI(t, tc.args...)
			requireCode(t, r, exitRuntime)
			requireErrorLine(t, r)
			require.Contains(t, r.stderr, "no-such-job")
		})
	}
}

// Flags may follow the arguments: the flag package alone would take
// "--json" for a second ROOT.
func TestParseArgs_FlagsAndArgumentsInAnyOrder(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		wantPos  []string
		wantJSON bool
	}{
		{[]string{"r"}, []string{"r"}, false},
		{[]string{"r", "--json"}, []string{"r"}, true},
		{[]string{"--json", "r"}, []string{"r"}, true},
		{[]string{"-json", "r", "s"}, []string{"r", "s"}, true},
		{[]string{"r", "--", "--json"}, []string{"r", "--json"}, false},
		{[]string{"--", "-r"}, []string{"-r"}, false},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			fs := newTestFlagSet()
			asJSON := fs.Bool("json", false, "")
			pos, err := parseArgs(fs, tc.args, 0, -1, "ARGS")
			require.NoError(t, err)
			require.Equal(t, tc.wantPos, pos)
			require.Equal(t, tc.wantJSON, *asJSON)
		})
	}
}

func TestParseArgs_CountsPositionals(t *testing.T) {
	_, err := parseArgs(newTestFlagSet(), nil, 1, 1, "ROOT")
	require.ErrorContains(t, err, "missing ROOT")
	_, err = parseArgs(newTestFlagSet(), []string{"a", "b"}, 1, 1, "ROOT")
	require.ErrorContains(t, err, `unexpected argument "b"`)
	require.Equal(t, exitUsage, exitCode(err))
}

// Every error line has one remedy, even for an error that came without
// one: the library's, unless it names Go API (FixIt); then the CLI's.
func TestErrorLine_AlwaysEndsWithTheCLIRemedy(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("open x: %w", fs.ErrNotExist), "jobstore: open x: file does not exist. Remedy: check the path"},
		{fmt.Errorf("open x: %w", fs.ErrPermission), "jobstore: open x: permission denied. Remedy: give this user read access to the file, write access to its directory (see docs/guarantees.md)"},
		{errors.New("jobstore: boom"), "jobstore: boom. Remedy: check the path, the permissions and the disk, then try again"},
		{&jobstore.Error{Op: "read status", Path: "p", Msg: "bad", Remedy: "call FixIt"}, "jobstore: read status p: bad. Remedy: check the path, the permissions and the disk, then try again"},
		// A library remedy is never shown, even in plain words: the CLI's for the kind.
		{&jobstore.Error{Op: "read status", Path: "p", Msg: "bad", Remedy: "read it again"}, "jobstore: read status p: bad. Remedy: check the path, the permissions and the disk, then try again"},
		{&jobstore.Error{Op: "start", Path: "p", Msg: "refused", Remedy: "stop", Err: &jobstore.Error{Op: "read", Msg: "bad", Sentinel: jobstore.ErrLocked, Remedy: "fix it"}},
			"jobstore: start p: refused: jobstore: read: bad. Remedy: another process runs this job: wait for it ('jobstore wait ROOT/ID')"},
		{&jobstore.Error{Op: "read status", Path: "p", Sentinel: jobstore.ErrCorrupt, Remedy: "call FixIt"},
			"jobstore: read status p: corrupt record. Remedy: restore the file from a backup or remove it; 'jobstore check ROOT' finds others"},
		{withCLIRemedy(&jobstore.Error{Op: "check", Path: "p", Msg: "bad.", Remedy: "call FixIt"}, "do this"), "jobstore: check p: bad. Remedy: do this"},
		{&usageError{cmd: "list", msg: "missing ROOT"}, "jobstore list: missing ROOT. Remedy: run 'jobstore help list'"},
	} {
		require.Equal(t, tc.want, errorLine(tc.err))
		require.Equal(t, 1, strings.Count(errorLine(tc.err), "Remedy: "))
	}
}

// A mistyped command or flag gets the closest one suggested; a name far
// from every command gets none.
func TestUnknownCommand_SuggestsTheClosest(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"lst"}, `unknown command "lst"; did you mean list?`},
		{[]string{"shwo"}, `unknown command "shwo"; did you mean show?`},
		{[]string{"reconcil"}, `unknown command "reconcil"; did you mean reconcile?`},
		{[]string{"help", "wacth"}, `help: no command "wacth"; did you mean watch?`},
		{[]string{"list", ".", "--jsno"}, "unknown flag --jsno; did you mean --json?"},
		{[]string{"frobnicate"}, `unknown command "frobnicate". Remedy:`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			r := runCLI(t, tc.args...)
			requireCode(t, r, exitUsage)
			requireErrorLine(t, r)
			require.Contains(t, r.stderr, tc.want)
		})
	}
}

func TestSuggestion(t *testing.T) {
	names := []string{"demo", "submit", "list", "show", "watch", "reconcile", "check"}
	for typed, want := range map[string]string{
		"lst": "list", "lis": "list", "ls": "", "chekc": "check", "sumbit": "submit",
		"x": "", "frobnicate": "", "": "", "listing": "", "shows": "show",
	} {
		require.Equal(t, want, suggestion(typed, names), "%q", typed)
	}
	require.Equal(t, 0, editDistance("list", "list"))
	require.Equal(t, 1, editDistance("shwo", "show"), "a transposition is one edit")
	require.Equal(t, 3, editDistance("", "abc"))
	require.Equal(t, 2, editDistance("kitten", "sitting")-1)
}

// Flags are named in errors as the user typed them: one dash or two.
func TestFlagErrors_EchoTheFlagAsTyped(t *testing.T) {
	root := testdir.New(t)
	dir := filepath.Join(root, "j")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"list", root, "-colour"}, "unknown flag -colour"},
		{[]string{"list", root, "--colour=red"}, "unknown flag --colour"},
		{[]string{"watch", dir, "-interval", "0s"}, "-interval must be positive"},
		{[]string{"watch", dir, "--interval", "0s"}, "--interval must be positive"},
		{[]string{"watch", dir, "--interval=soon"}, `--interval: invalid value "soon"`},
		{[]string{"watch", dir, "-interval=soon"}, `-interval: invalid value "soon"`},
		{[]string{"list", root, "--json=maybe"}, `--json: invalid value "maybe"`},
		{[]string{"watch", dir, "--interval"}, "--interval needs a value"},
		{[]string{"submit", root, "--kind", "k", "-id", "../x"}, "jobstore submit: -id: "},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			r := runCLI(t, tc.args...)
			requireCode(t, r, exitUsage)
			requireErrorLine(t, r)
			require.Contains(t, r.stderr, tc.want)
			require.NotContains(t, strings.ReplaceAll(r.stderr, tc.want, ""), "flag -", "the flag package's own spelling leaked")
		})
	}
}

func TestVersion_PrintsModuleVersionAndRevision(t *testing.T) {
	for _, arg := range []string{"--version", "-version"} {
		r := runCLI(t, arg)
		requireCode(t, r, exitOK)
		require.Empty(t, r.stderr)
		require.Regexp(t, `^jobstore \S+, revision \S+( \(modified\))?, built with go\S+\n$`, r.stdout)
	}
	r := runCLI(t, "--version", "extra")
	requireCode(t, r, exitUsage)
	requireErrorLine(t, r)
}

func TestBuildVersion(t *testing.T) {
	for _, tc := range []struct {
		name string
		info *debug.BuildInfo
		ok   bool
		want string
	}{
		{"no build info", nil, false, "jobstore (devel), revision unknown, built with unknown\n"},
		{"devel without VCS", &debug.BuildInfo{GoVersion: "go1.25.0", Main: debug.Module{Version: "(devel)"}}, true,
			"jobstore (devel), revision unknown, built with go1.25.0\n"},
		{"empty version", &debug.BuildInfo{GoVersion: "go1.25.0"}, true,
			"jobstore (devel), revision unknown, built with go1.25.0\n"},
		{"release", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.4.0"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "48f44c9e"}, {Key: "vcs.modified", Value: "false"}}}, true,
			"jobstore v1.4.0, revision 48f44c9e, built with go1.26.8\n"},
		{"modified checkout", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20261130093540-48f44c9e0000+dirty"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "48f44c9e"}, {Key: "vcs.modified", Value: "true"}}}, true,
			"jobstore v0.0.0-20261130093540-48f44c9e0000+dirty, revision 48f44c9e (modified), built with go1.26.8\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, buildVersion(tc.info, tc.ok))
		})
	}
}

// The binary prints what its own build info records (read from the file
// by debug/buildinfo, as "go version -m" does).
func TestVersion_MatchesTheBinarysBuildInfo(t *testing.T) {
	info, err := buildinfo.ReadFile(cli)
	require.NoError(t, err)
	r := runCLI(t, "--version")
	requireCode(t, r, exitOK)
	require.Equal(t, buildVersion(info, true), r.stdout)
	require.Contains(t, r.stdout, info.GoVersion)
}

// The remedies a CLI user sees never name the library's Go functions or
// options: where the library's does, the CLI's remedy for the kind (short,
// naming jobstore commands) takes its place.
func TestCLIRemedy_ShortAndSpeaksCLI(t *testing.T) {
	goName := regexp.MustCompile(`\b[A-Z][a-z]+[A-Z][A-Za-z]*\b|\(\)`)
	sentinels := []error{jobstore.ErrNotJob, jobstore.ErrExists, jobstore.ErrCorrupt, jobstore.ErrTooLarge,
		jobstore.ErrInvalid, jobstore.ErrWrongState, jobstore.ErrNewerSchema, jobstore.ErrNoMigration, jobstore.ErrLocked,
		jobstore.ErrCancelRequested, jobstore.ErrNotRegular, jobstore.ErrNotOwner, jobstore.ErrNotDue, nil}
	seen := map[string]bool{}
	for _, s := range sentinels {
		for _, subject := range []string{"", "progress"} {
			for _, cause := range []error{nil, fs.ErrNotExist, fs.ErrPermission, errDiskFull} {
				err := &jobstore.Error{Op: "read status", Path: "p", Sentinel: s, Subject: subject, Err: cause,
					Remedy: "call RebuildIndex, or raise the limit WithMaxSize()"}
				remedy := cliRemedy(err)
				require.LessOrEqual(t, len(remedy), 100, "%q", remedy)
				require.NotRegexp(t, goName, remedy)
				seen[remedy] = true
			}
		}
	}
	require.GreaterOrEqual(t, len(seen), 10, "remedies are chosen by the kind of error")
}

// Every broken record of the fixtures: its remedy on the CLI names no Go
// API, and holds no second remedy.
func TestCLIRemedy_OfEachBrokenFixtureSpeaksNoGo(t *testing.T) {
	api := goAPI(t)
	r := runCLI(t, "check", brokenRoot)
	requireCode(t, r, exitUnsuccessful)
	remedies := 0
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		if _, remedy, ok := strings.Cut(line, "Remedy: "); ok {
			remedies++
			requireNoGoAPI(t, api, remedy)
			require.NotContains(t, remedy, "Remedy: ", line)
		}
	}
	require.GreaterOrEqual(t, remedies, 16)
}
