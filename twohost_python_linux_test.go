package jobstore_test

import (
	"bufio"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/require"
)

// seedPoller is the seed-style Python poller: open status.json afresh each
// round, json.load it, retry a round on a decode error, and print each new
// seq. It exits 1 if seq goes back or a record follows a terminal one. It
// ends when its stdin closes, or once it has seen the seq that a line on its
// stdin names (another host's change may reach it a while after the test
// knows it was written).
const seedPoller = `
import json, os, select, sys, time
path = os.path.join(sys.argv[1], "status.json")
last, last_state, until = 0, None, None
while until is None or last < until:
    r, _, _ = select.select([sys.stdin], [], [], 0.01)
    if r:
        line = sys.stdin.readline()
        if not line:
            break
        until = int(line)
    try:
        with open(path) as f:
            st = json.load(f)
    except (OSError, ValueError):
        continue
    seq = st["seq"]
    if seq < last:
        print("back %d %d" % (last, seq), flush=True); sys.exit(1)
    if last_state in ("succeeded", "failed", "cancelled", "lost") and seq != last:
        print("after-terminal %d %d" % (last, seq), flush=True); sys.exit(1)
    if seq != last:
        print(seq, flush=True)
    last, last_state = seq, st["state"]
`

// startSeedPoller runs seedPoller on dir; the returned function lets it
// poll until it sees seq until (its hang guard fails the test if it never
// does), requires that it saw nothing go back, and returns the seqs it
// printed.
func startSeedPoller(t *testing.T, dir jobstore.JobDir) func(until uint64) []uint64 {
	t.Helper()
	py := python(t)
	script := filepath.Join(tempDir(t), "seed_poller.py")
	writeFile(t, script, []byte(seedPoller))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a hang guard
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, py, script, string(dir))
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return func(until uint64) []uint64 {
		t.Helper()
		_, err := fmt.Fprintln(in, until)
		require.NoError(t, err)
		var seqs []uint64
		var bad []string
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			n, err := strconv.ParseUint(sc.Text(), 10, 64)
			if err != nil {
				bad = append(bad, sc.Text())
				continue
			}
			seqs = append(seqs, n)
		}
		require.Empty(t, bad, "the Python poller saw seq go back or a record after a terminal one")
		require.NoError(t, cmd.Wait(), "the Python poller never saw seq %d (its last: %v)", until, seqs) // Wait closes in
		return seqs
	}
}
