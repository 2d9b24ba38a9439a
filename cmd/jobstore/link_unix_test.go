//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/clitest"
	"github.com/axqua/jobstore/cmd/jobstore/internal/jobview"
	"github.com/axqua/jobstore/internal/testdir"
	"github.com/stretchr/testify/require"
)

// linkedJob makes ROOT/LINK, a symbolic link to a queued job LINK outside
// ROOT (whose records a command that followed the link would read or
// change: their job_id is the link's name), and returns ROOT, the link and
// the job it leads to.
func linkedJob(t *testing.T) (root, link string, target jobstore.JobDir) {
	t.Helper()
	root = testdir.New(t)
	clitest.Submit(t, root, "a")
	target = clitest.Submit(t, testdir.New(t), "LINK")
	link = filepath.Join(root, "LINK")
	require.NoError(t, os.Symlink(string(target), link))
	return root, link, target
}

// Every command refuses a job directory that is a symbolic link as the
// library does, however the path is spelled ("LINK/" and "LINK/." would
// make the kernel follow it): exit 3 at once, the error saying it is a
// link, nothing read or changed through it (the job it leads to has ended
// and kept its output, so that retry and logs would act there).
func TestLinkedJobDir_EveryCommandRefusesIt(t *testing.T) {
	commands := map[string][]string{
		"show":          {"show"},
		"show --json":   {"show", "--json"},
		"cancel":        {"cancel", "--reason", "test"},
		"wait":          {"wait", "--timeout", lineTimeout.String()},
		"watch":         {"watch"},
		"retry":         {"retry"},
		"logs":          {"logs"},
		"logs --follow": {"logs", "--follow", "--interval", watchPoll.String()},
	}
	for _, spelling := range []string{"", "/", "//", "/."} {
		for name, args := range commands {
			t.Run(name+" LINK"+spelling, func(t *testing.T) {
				_, link, target := linkedJob(t)
				// Ended, with output kept: what retry would queue again and
				// logs would print, were the link followed.
				require.NoError(t, jobstore.WriteStatus(target, jobstore.JobStatus{State: jobstore.Failed, Seq: 2, Error: "exit 1"}))
				require.NoError(t, os.WriteFile(filepath.Join(string(target), jobview.StdoutFile), []byte("outside the root\n"), 0o644))
				before := readTree(t, string(target))
				r := runCLI(t, append(append([]string{}, args[0], link+spelling), args[1:]...)...)
				requireCode(t, r, exitRuntime)
				requireErrorLine(t, r)
				require.Contains(t, r.stderr, link+": is a symbolic link")
				require.NotContains(t, r.stderr, "removed meanwhile")
				require.Empty(t, r.stdout, "nothing read through the link")
				require.Equal(t, before, readTree(t, string(target)), "nothing changed through the link")
			})
		}
	}
}

// readTree maps each file under dir to its content.
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	tree := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		tree[path] = string(b)
		return err
	}))
	return tree
}

// list skips a symbolic link in ROOT, as List does, with or without
// --watch: one there at the start, and one made while it watches.
func TestList_SkipsALinkAsListDoes(t *testing.T) {
	root, _, _ := linkedJob(t)
	r := runCLI(t, "list", root)
	requireCode(t, r, exitOK)
	require.Contains(t, r.stdout, "a ")
	require.NotContains(t, r.stdout, "LINK")

	w := startLines(t, "list", root, "--watch", "--interval", watchPoll.String())
	w.waitLine(t, "a ")
	require.NoError(t, os.Symlink(string(clitest.Submit(t, testdir.New(t), "LINK2")), filepath.Join(root, "LINK2")))
	clitest.Submit(t, root, "c")
	w.waitLine(t, "c  queued")
	w.interrupt(t)
	w.wait(t)
	requireEndedBy(t, w.cmd, syscall.SIGINT)
	for _, l := range w.seen {
		require.NotContains(t, l, "LINK", "list --watch showed a link:\n%s", strings.Join(w.seen, "\n"))
	}
}
