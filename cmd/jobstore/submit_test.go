package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

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
