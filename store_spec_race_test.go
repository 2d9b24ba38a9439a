package jobstore_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/axqua/jobstore"
)

// The spec race's knobs.
const (
	raceProcs       = 8
	raceDirs        = 50
	racerRole       = "spec-racer"
	racerRootEnv    = "JOBSTORE_RACE_ROOT"
	racerNameEnv    = "JOBSTORE_RACE_NAME"
	racerReadyLine  = "ready"
	racerWonPrefix  = "won"  // won <job-id> <compact JSON of the spec written>
	racerLostPrefix = "lost" // lost <job-id>: WriteSpec returned ErrExists (and fs.ErrExist)
	racerFailPrefix = "fail" // fail <job-id> <error>: anything else
)

func raceJobID(i int) string { return fmt.Sprintf("job-%03d", i) }

// specRacer is the racing child: once its stdin closes (the start line for
// all racers at once), it calls WriteSpec on root/job-000 ... job-049, in
// that order, with a spec only it writes (SubmittedBy and a label name it),
// and reports each outcome on stdout.
func specRacer() int {
	root, name := os.Getenv(racerRootEnv), os.Getenv(racerNameEnv)
	fmt.Println(racerReadyLine)
	_, _ = io.Copy(io.Discard, os.Stdin)
	for i := range raceDirs {
		id := raceJobID(i)
		spec := jobstore.JobSpec{
			SchemaVersion: jobstore.JobSchemaVersion,
			ID:            id,
			Kind:          "race",
			Params:        json.RawMessage(`{"racer":"` + name + `"}`),
			SubmittedAt:   jobstore.Now(),
			SubmittedBy:   name,
			Labels:        map[string]string{"racer": name, "pid": strconv.Itoa(os.Getpid())},
		}
		err := jobstore.WriteSpec(jobstore.JobDir(filepath.Join(root, id)), spec)
		switch {
		case err == nil:
			b, merr := spec.MarshalJSON() // the spec as written, compact
			if merr != nil {
				fmt.Printf("%s %s marshal: %v\n", racerFailPrefix, id, merr)
				continue
			}
			fmt.Printf("%s %s %s\n", racerWonPrefix, id, b)
		case errors.Is(err, jobstore.ErrExists) && errors.Is(err, fs.ErrExist):
			fmt.Printf("%s %s\n", racerLostPrefix, id)
		default:
			fmt.Printf("%s %s %v\n", racerFailPrefix, id, strings.ReplaceAll(err.Error(), "\n", " "))
		}
	}
	return 0
}

// raceOutcome is what the racers reported for one job directory.
type raceOutcome struct {
	winners []string // racer names
	written []byte   // the winner's spec, compact JSON
	losers  int
	fails   []string
}

// TestWriteSpec_ExactlyOneWinnerUnderProcessRace: raceProcs processes,
// released together, race WriteSpec on the same raceDirs fresh job
// directories. In every directory exactly one wins, job.json holds the
// winner's spec (byte for byte, up to layout whitespace), every other
// racer gets ErrExists (which matches fs.ErrExist too), and no temp file is
// left anywhere.
func TestWriteSpec_ExactlyOneWinnerUnderProcessRace(t *testing.T) {
	root := tempDir(t)
	type racer struct {
		name  string
		cmd   *exec.Cmd
		start io.WriteCloser
		lines chan []string
	}
	var racers []racer
	var ready sync.WaitGroup
	for p := range raceProcs {
		name := fmt.Sprintf("racer-%d", p)
		cmd := childCommand(t, racerRole, racerRootEnv+"="+root, racerNameEnv+"="+name)
		stdin, err := cmd.StdinPipe()
		require.NoError(t, err)
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		startChild(t, cmd)
		r := racer{name, cmd, stdin, make(chan []string, 1)}
		racers = append(racers, r)
		ready.Add(1)
		go func() {
			sc := bufio.NewScanner(stdout)
			sc.Buffer(nil, 1<<20)
			readySeen := false
			var lines []string
			for sc.Scan() {
				if !readySeen && sc.Text() == racerReadyLine {
					readySeen = true
					ready.Done()
					continue
				}
				lines = append(lines, sc.Text())
			}
			if !readySeen {
				ready.Done()
			}
			r.lines <- lines
		}()
	}
	ready.Wait()
	began := time.Now()
	for _, r := range racers {
		require.NoError(t, r.start.Close()) // go
	}

	outcomes := make(map[string]*raceOutcome)
	for i := range raceDirs {
		outcomes[raceJobID(i)] = &raceOutcome{}
	}
	for _, r := range racers {
		lines := <-r.lines
		require.NoError(t, r.cmd.Wait(), "%s", r.name)
		require.Len(t, lines, raceDirs, "%s reported %d outcomes: %q", r.name, len(lines), lines)
		for _, line := range lines {
			kind, rest, _ := strings.Cut(line, " ")
			id, detail, _ := strings.Cut(rest, " ")
			o, ok := outcomes[id]
			require.True(t, ok, "%s reported an unknown job: %q", r.name, line)
			switch kind {
			case racerWonPrefix:
				o.winners = append(o.winners, r.name)
				o.written = []byte(detail)
			case racerLostPrefix:
				o.losers++
			default:
				o.fails = append(o.fails, r.name+": "+line)
			}
		}
	}
	elapsed := time.Since(began)

	for i := range raceDirs {
		id := raceJobID(i)
		o := outcomes[id]
		require.Empty(t, o.fails, "%s: racers failed otherwise than with ErrExists", id)
		require.Len(t, o.winners, 1, "%s: want exactly one winner, got %q", id, o.winners)
		require.Equal(t, raceProcs-1, o.losers, "%s: every other racer must get ErrExists", id)

		dir := jobstore.JobDir(filepath.Join(root, id))
		raw, err := os.ReadFile(dir.SpecPath())
		require.NoError(t, err, "%s", id)
		var compact bytes.Buffer
		require.NoError(t, json.Compact(&compact, raw), "%s: job.json", id)
		assert.Equal(t, string(o.written), compact.String(), "%s: job.json is not what the winner %s wrote", id, o.winners[0])
		spec, err := jobstore.ReadSpec(dir)
		require.NoError(t, err, "%s", id)
		require.Equal(t, o.winners[0], spec.SubmittedBy, "%s", id)

		entries, err := os.ReadDir(string(dir))
		require.NoError(t, err)
		for _, e := range entries {
			require.False(t, jobstore.IsTempName(e.Name()), "%s: temp file %s left behind", id, e.Name())
			require.Contains(t, []string{jobstore.SpecFile, jobstore.LockFile}, e.Name(), "%s: unexpected file", id)
		}
	}
	require.Len(t, names(t, root), raceDirs, "the root holds something else than the job directories")

	wins := map[string]int{} // spread across racers: the processes did race
	for _, o := range outcomes {
		wins[o.winners[0]]++
	}
	t.Logf("%d processes x %d job dirs in %v: one winner each, %d ErrExists; wins per racer %v",
		raceProcs, raceDirs, elapsed.Round(time.Millisecond), raceDirs*(raceProcs-1), wins)
}
