package main

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
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
		{"unknown flag", []string{"list", root, "--colour"}, "flag provided but not defined: -colour"},
		{"submit without kind", []string{"submit", root}, "--kind is required"},
		{"submit with bad params", []string{"submit", root, "--kind", "k", "--params", "{oops"}, "not valid JSON"},
		{"submit with missing params file", []string{"submit", root, "--kind", "k", "--params", "@" + filepath.Join(root, "nope.json")}, "--params"},
		{"submit with bad label", []string{"submit", root, "--kind", "k", "--label", "novalue"}, "not KEY=VALUE"},
		{"submit with repeated label", []string{"submit", root, "--kind", "k", "--label", "a=1", "--label", "a=2"}, `label "a" given twice`},
		{"submit with bad id", []string{"submit", root, "--kind", "k", "--id", "../escape"}, "--id"},
		{"watch with zero interval", []string{"watch", root, "--interval", "0s"}, "--interval must be positive"},
		{"demo with two roots", []string{"demo", root, root}, "unexpected argument"},
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

// Every error line has a remedy, even for an error that came without one.
func TestErrorLine_AlwaysEndsWithARemedy(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("open x: %w", fs.ErrNotExist), "jobstore: open x: file does not exist. Remedy: check the path"},
		{fmt.Errorf("open x: %w", fs.ErrPermission), "jobstore: open x: permission denied. Remedy: give this user access to the file and its directory"},
		{errors.New("jobstore: boom"), "jobstore: boom. Remedy: check the path, the permissions and the disk, then try again"},
		{&jobstore.Error{Op: "read status", Path: "p", Msg: "bad", Remedy: "fix it"}, "jobstore: read status p: bad. Remedy: fix it"},
	} {
		require.Equal(t, tc.want, errorLine(tc.err))
	}
}
