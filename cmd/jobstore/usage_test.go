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
	"github.com/axqua/jobstore/cmd/jobstore/internal/remedy"
	"github.com/axqua/jobstore/internal/testdir"
	"github.com/spf13/pflag"
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

// Flags may follow the arguments, and long flags may be typed with one
// dash: "-json" is --json, not -j -s -o -n. A flag's value and what
// follows "--" are never taken for flags.
func TestCommandLine_FlagsAndArgumentsInAnyOrder(t *testing.T) {
	for _, tc := range []struct {
		args       []string
		wantPos    []string
		wantJSON   bool
		wantSearch string
	}{
		{[]string{"r"}, []string{"r"}, false, ""},
		{[]string{"r", "--json"}, []string{"r"}, true, ""},
		{[]string{"--json", "r"}, []string{"r"}, true, ""},
		{[]string{"-json", "r", "s"}, []string{"r", "s"}, true, ""},
		{[]string{"-json=false", "r"}, []string{"r"}, false, ""},
		{[]string{"r", "--", "--json"}, []string{"r", "--json"}, false, ""},
		{[]string{"--", "-r"}, []string{"-r"}, false, ""},
		{[]string{"r", "-search", "-json"}, []string{"r"}, false, "-json"},
		{[]string{"r", "--search", "--json", "-json"}, []string{"r"}, true, "--json"},
		{[]string{"-search=-x", "r"}, []string{"r"}, false, "-x"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var gotPos []string
			var gotJSON bool
			var gotSearch string
			probe := &command{name: "probe", minPos: 0, maxPos: -1, posNames: "ARGS",
				define: func(fs *pflag.FlagSet) runFunc {
					asJSON := fs.Bool("json", false, "")
					search := fs.String("search", "", "")
					return func(_ *env, _, pos []string) error {
						gotPos, gotJSON, gotSearch = pos, *asJSON, *search
						return nil
					}
				}}
			var out strings.Builder
			args := append([]string{"probe"}, tc.args...)
			root := commandTree(&env{stdout: &out, stderr: &out}, args, []*command{probe})
			root.SetArgs(withDoubleDashes(root, args))
			require.NoError(t, root.Execute(), out.String())
			require.Equal(t, tc.wantPos, gotPos)
			require.Equal(t, tc.wantJSON, gotJSON)
			require.Equal(t, tc.wantSearch, gotSearch)
		})
	}
}

func TestCheckPositional_CountsArguments(t *testing.T) {
	c := &command{minPos: 1, maxPos: 1, posNames: "ROOT"}
	require.ErrorContains(t, c.checkPositional(nil), "missing ROOT")
	err := c.checkPositional([]string{"a", "b"})
	require.ErrorContains(t, err, `unexpected argument "b"`)
	require.Equal(t, exitUsage, exitStatusOf(err))
	require.NoError(t, c.checkPositional([]string{"a"}))
	c = &command{minPos: 1, maxPos: -1, posNames: "DIR"}
	require.NoError(t, c.checkPositional([]string{"a", "b", "c"}))
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
		{remedy.WithCLIRemedy(&jobstore.Error{Op: "check", Path: "p", Msg: "bad.", Remedy: "call FixIt"}, "do this"), "jobstore: check p: bad. Remedy: do this"},
		{&remedy.UsageError{Cmd: "list", Msg: "missing ROOT"}, "jobstore list: missing ROOT. Remedy: run 'jobstore help list'"},
	} {
		require.Equal(t, tc.want, remedy.ErrorLine(tc.err))
		require.Equal(t, 1, strings.Count(remedy.ErrorLine(tc.err), "Remedy: "))
	}
}

// A mistyped command or flag gets the closest ones suggested (by cobra's
// matcher), in the remedy, worded as a question that ends before the
// remedy's own sentence; a name far from every command gets none.
func TestUnknownCommand_SuggestsTheClosest(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"lst"}, `jobstore: unknown command "lst". Remedy: did you mean list? Run 'jobstore help' for the list of commands`},
		{[]string{"shwo"}, `jobstore: unknown command "shwo". Remedy: did you mean show? Run 'jobstore help' for the list of commands`},
		{[]string{"reconcil"}, `jobstore: unknown command "reconcil". Remedy: did you mean reconcile? Run 'jobstore help' for the list of commands`},
		{[]string{"re"}, `jobstore: unknown command "re". Remedy: did you mean reconcile, retry or rm? Run 'jobstore help' for the list of commands`},
		{[]string{"help", "wacth"}, `jobstore: help: no command "wacth". Remedy: did you mean wait or watch? Run 'jobstore help' for the list of commands`},
		{[]string{"list", ".", "--jsno"}, `jobstore list: unknown flag --jsno. Remedy: did you mean --json? Run 'jobstore help list' for its flags`},
		{[]string{"list", ".", "-jsno"}, `jobstore list: unknown flag -jsno. Remedy: did you mean --json? Run 'jobstore help list' for its flags`},
		{[]string{"frobnicate"}, `jobstore: unknown command "frobnicate". Remedy: run 'jobstore help' for the list of commands`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			r := runCLI(t, tc.args...)
			requireCode(t, r, exitUsage)
			requireErrorLine(t, r)
			require.Equal(t, tc.want+"\n", r.stderr)
			require.NotContains(t, r.stderr, "?.")
		})
	}
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
			require.NotContains(t, strings.ReplaceAll(r.stderr, tc.want, ""), "flag -", "the parser's own spelling leaked")
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
				remedy := remedy.CliRemedy(err)
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
