package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/internal/testdir"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSubmit_ParamsOverTheRecordLimitAreABadArgument: params that no
// record could hold are refused before anything is written, exit 2.
func TestSubmit_ParamsOverTheRecordLimitAreABadArgument(t *testing.T) {
	tmp := testdir.New(t)
	big := filepath.Join(tmp, "big.json")
	// A valid JSON string one byte over the limit.
	require.NoError(t, os.WriteFile(big, []byte(`"`+strings.Repeat("x", jobstore.DefaultMaxSize-1)+`"`), 0o644))
	root := filepath.Join(tmp, "jobs")

	r := runCLI(t, "submit", root, "--kind", "k", "--params", "@"+big)
	requireCode(t, r, exitUsage)
	requireErrorLine(t, r)
	assert.Contains(t, r.stderr, "larger than "+strconv.Itoa(jobstore.DefaultMaxSize)+" bytes")
	assert.Contains(t, r.stderr, "file "+big)
	_, err := os.Stat(root)
	assert.True(t, os.IsNotExist(err), "no root, no job: nothing was written")
}

// TestSubmit_ParamsAreReadWithABound: an endless --params input is refused
// after limit+1 bytes instead of being read into memory until it ends.
func TestSubmit_ParamsAreReadWithABound(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("needs /dev/zero, an endless file")
	}
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skipf("needs /dev/zero, an endless file: %v", err)
	}
	root := filepath.Join(testdir.New(t), "jobs")
	r := runCLI(t, "submit", root, "--kind", "k", "--params", "@/dev/zero")
	requireCode(t, r, exitUsage)
	assert.Contains(t, r.stderr, "larger than")
}

// TestReadParams_LimitIsInclusive: a value of exactly the limit passes the
// size check (and is then judged as JSON); one byte more does not.
func TestReadParams_LimitIsInclusive(t *testing.T) {
	tmp := testdir.New(t)
	for _, tt := range []struct {
		size     int
		tooLarge bool
	}{{jobstore.DefaultMaxSize, false}, {jobstore.DefaultMaxSize + 1, true}} {
		t.Run(strconv.Itoa(tt.size), func(t *testing.T) {
			path := filepath.Join(tmp, strconv.Itoa(tt.size))
			require.NoError(t, os.WriteFile(path, []byte(`"`+strings.Repeat("x", tt.size-2)+`"`), 0o644))
			raw, err := readParams("@" + path)
			if tt.tooLarge {
				require.Error(t, err)
				assert.Contains(t, err.Error(), "larger than")
				return
			}
			require.NoError(t, err)
			assert.Len(t, raw, tt.size)
		})
	}
}

// How and when a job runs is written into its spec, as the flags say;
// values the library would refuse are bad arguments, and nothing is
// written.
func TestSubmit_ScheduleFlagsAreWrittenIntoTheSpec(t *testing.T) {
	root := filepath.Join(testdir.New(t), "jobs")
	before := time.Now()
	r := runCLI(t, "submit", root, "--create", "--kind", "k", "--id", "sched", "--max-attempts", "5", "--backoff", "2s",
		"--max-backoff", "1m", "--not-before", "+2h", "--priority", "-3", "--timeout", "90s")
	requireCode(t, r, exitOK)
	spec, err := jobstore.ReadSpec(jobstore.JobDir(filepath.Join(root, "sched")))
	require.NoError(t, err)
	assert.Equal(t, 5, spec.MaxAttempts)
	assert.Equal(t, 2*time.Second, spec.Backoff)
	assert.Equal(t, time.Minute, spec.MaxBackoff)
	assert.Equal(t, -3, spec.Priority)
	assert.Equal(t, 90*time.Second, spec.Timeout)
	assert.WithinRange(t, spec.NotBefore, before.Add(2*time.Hour-time.Second), time.Now().Add(2*time.Hour+time.Second))

	r = runCLI(t, "submit", root, "--kind", "k", "--id", "at", "--not-before", "2030-01-02T03:04:05+01:00")
	requireCode(t, r, exitOK)
	spec, err = jobstore.ReadSpec(jobstore.JobDir(filepath.Join(root, "at")))
	require.NoError(t, err)
	assert.True(t, spec.NotBefore.Equal(time.Date(2030, 1, 2, 2, 4, 5, 0, time.UTC)), "%v", spec.NotBefore)

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"negative attempts", []string{"--max-attempts", "-1"}, "--max-attempts must be 1 or more"},
		{"negative backoff", []string{"--backoff", "-1s"}, "--backoff must be positive"},
		{"below a millisecond", []string{"--timeout", "500us"}, "--timeout must be at least 1ms"},
		{"cap below the first delay", []string{"--backoff", "1h", "--max-backoff", "1m"}, "--backoff (1h0m0s) must not be longer than --max-backoff (1m0s)"},
		{"a time that is not one", []string{"--not-before", "tomorrow"}, "is not an RFC 3339 time"},
		{"a negative offset", []string{"--not-before", "+-1h"}, "is not +DURATION"},
		{"a duration without +", []string{"--not-before", "2h"}, "is not an RFC 3339 time"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runCLI(t, append([]string{"submit", root, "--kind", "k", "--id", "bad"}, tc.args...)...)
			requireCode(t, r, exitUsage)
			requireErrorLine(t, r)
			assert.Contains(t, r.stderr, tc.want)
			assert.NoDirExists(t, filepath.Join(root, "bad"), "nothing was written")
		})
	}
}

// TestSubmit_MissingRootIsAnErrorUnlessCreateIsGiven: a mistyped ROOT is
// not made into a new root that no worker watches: exit 3, an error that
// names it and --create, nothing on stdout, nothing made. --create makes it.
func TestSubmit_MissingRootIsAnErrorUnlessCreateIsGiven(t *testing.T) {
	tmp := testdir.New(t)
	for _, tc := range []struct {
		name string
		root string
	}{
		{"missing root", filepath.Join(tmp, "jbos")},
		{"missing parent too", filepath.Join(tmp, "typo", "jobs")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runCLI(t, "submit", tc.root, "--kind", "k", "--id", "j")
			requireCode(t, r, exitRuntime)
			requireErrorLine(t, r)
			assert.Contains(t, r.stderr, tc.root)
			assert.Contains(t, r.stderr, "no such root")
			assert.Contains(t, r.stderr, "--create")
			_, err := os.Lstat(tc.root)
			assert.True(t, os.IsNotExist(err), "the missing root was made: %v", err)

			r = runCLI(t, "submit", tc.root, "--kind", "k", "--id", "j", "--create")
			requireCode(t, r, exitOK)
			require.Equal(t, "j\n", r.stdout)
			spec, err := jobstore.ReadSpec(jobstore.JobDir(filepath.Join(tc.root, "j")))
			require.NoError(t, err)
			require.Equal(t, "k", spec.Kind)

			// The root exists now: no --create needed.
			requireCode(t, runCLI(t, "submit", tc.root, "--kind", "k", "--id", "j2"), exitOK)
		})
	}
}
