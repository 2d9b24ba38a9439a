package jobstore_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/axqua/jobstore"
)

// The kill test's knobs. A round is: start a writer process, wait until it
// says it is ready, let it write for killMinDelay..killMaxDelay, kill it.
const (
	killRoundsEnv       = "JOBSTORE_KILL_ROUNDS" // raises the number of rounds
	killDefaultRounds   = 200
	killMinDelay        = 1 * time.Millisecond
	killMaxDelay        = 30 * time.Millisecond
	killWriterRole      = "kill-writer"
	killWriterDirEnv    = "JOBSTORE_KILL_DIR"
	killWriterStartEnv  = "JOBSTORE_KILL_START"
	killWriterReadyLine = "ready"
)

// killWriter is the child: it rewrites status.json with seq = start+1,
// start+2, ... as fast as it can, printing each seq once WriteStatus has
// returned nil (an acknowledgement), until it is killed. os.Stdout is not
// buffered in Go: each line is one write(2), out before the next write starts.
func killWriter() int {
	dir := jobstore.JobDir(os.Getenv(killWriterDirEnv))
	seq, err := strconv.ParseUint(os.Getenv(killWriterStartEnv), 10, 64)
	if err != nil {
		fmt.Printf("error: bad %s: %v\n", killWriterStartEnv, err)
		return 2
	}
	// A message of a few KiB makes each write take long enough for kills to
	// land inside it, not only between writes.
	msg := bytes.Repeat([]byte("progress "), 512)
	fmt.Println(killWriterReadyLine)
	for {
		seq++
		st := jobstore.JobStatus{State: jobstore.Running, Seq: seq, Message: string(msg), PID: os.Getpid()}
		if err := jobstore.WriteStatus(dir, st); err != nil {
			fmt.Printf("error: seq %d: %v\n", seq, err)
			return 1
		}
		fmt.Println(seq)
	}
}

func killRounds(t *testing.T) int {
	t.Helper()
	s := os.Getenv(killRoundsEnv)
	if s == "" {
		return killDefaultRounds
	}
	n, err := strconv.Atoi(s)
	require.NoError(t, err, "%s", killRoundsEnv)
	return max(n, killDefaultRounds)
}

// killRound is what one writer process acknowledged before it was killed.
type killRound struct {
	acks    int
	lastAck uint64 // valid if acks > 0
}

// runKilledWriter starts a writer of dir at seq start, kills it
// killMinDelay..killMaxDelay after it reported ready, and returns what it
// acknowledged.
func runKilledWriter(t *testing.T, dir jobstore.JobDir, start uint64) killRound {
	t.Helper()
	cmd := childCommand(t, killWriterRole, killWriterDirEnv+"="+string(dir), killWriterStartEnv+"="+strconv.FormatUint(start, 10))
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	startChild(t, cmd)

	ready := make(chan struct{})
	type result struct {
		round killRound
		bad   string
	}
	done := make(chan result, 1)
	go func() {
		var r result
		sc := bufio.NewScanner(out)
		readySeen := false
		for sc.Scan() {
			line := sc.Text()
			if !readySeen && line == killWriterReadyLine {
				readySeen = true
				close(ready)
				continue
			}
			seq, err := strconv.ParseUint(line, 10, 64)
			if err != nil || (r.round.acks > 0 && seq != r.round.lastAck+1) || (r.round.acks == 0 && seq != start+1) {
				if r.bad == "" {
					r.bad = line // a child error, or seqs out of order
				}
				continue
			}
			r.round.acks++
			r.round.lastAck = seq
		}
		if !readySeen {
			close(ready)
		}
		done <- r
	}()

	<-ready
	time.Sleep(killMinDelay + rand.N(killMaxDelay-killMinDelay+1))
	require.NoError(t, cmd.Process.Kill())
	r := <-done    // EOF: the child is dead, its end of the pipe closed
	_ = cmd.Wait() // "signal: killed" (exit status 1 on Windows); the child never exits by itself
	require.Empty(t, r.bad, "the writer child reported an error or an out-of-order seq")
	return r.round
}

// TestWriteStatus_SurvivesWriterKilledAtAnyInstant kills a process that
// rewrites status.json as fast as it can, at random instants, again and
// again (killDefaultRounds times; JOBSTORE_KILL_ROUNDS raises it). After
// every kill, status.json must be complete JSON holding the last
// acknowledged seq or the one after it (renamed, killed before it could
// say so), job.json must be byte-identical, and the kill must have left at
// most one temp file (the one write it interrupted). The litter is removed
// after each round, as a sweeper would, so that a leak shows as a count > 1.
func TestWriteStatus_SurvivesWriterKilledAtAnyInstant(t *testing.T) {
	rounds := killRounds(t)
	dir := jobstore.JobDir(filepath.Join(tempDir(t), "job-kill"))
	require.NoError(t, jobstore.WriteSpec(dir, jobstore.JobSpec{ID: dir.ID(), Kind: "kill-test"}))
	spec, err := os.ReadFile(dir.SpecPath())
	require.NoError(t, err)
	require.NoError(t, jobstore.WriteStatus(dir, jobstore.JobStatus{State: jobstore.Queued, Seq: 0}))

	var (
		durable       uint64 // the seq status.json is known to hold
		totalAcks     int
		killsAfterAck int // kills that landed while the writer was writing
		unacked       int // kills after a rename but before its acknowledgement
		litterKills   int // kills that interrupted a write and left its temp file
		maxLitter     int
	)
	began := time.Now()
	for round := 1; round <= rounds; round++ {
		r := runKilledWriter(t, dir, durable)
		lastAck := durable
		if r.acks > 0 {
			lastAck = r.lastAck
			killsAfterAck++
			totalAcks += r.acks
		}

		raw, err := os.ReadFile(dir.StatusPath())
		require.NoError(t, err, "round %d: status.json after the kill", round)
		require.True(t, json.Valid(raw), "round %d: status.json is not valid JSON after the kill (%d bytes): %.80q", round, len(raw), raw)
		st, err := jobstore.ReadStatus(dir, jobstore.WithRetries(1, 0))
		require.NoError(t, err, "round %d: ReadStatus after the kill", round)
		require.NotNil(t, st, "round %d: status.json vanished", round)
		require.GreaterOrEqual(t, st.Seq, lastAck, "round %d: an acknowledged write was lost", round)
		require.LessOrEqual(t, st.Seq, lastAck+1, "round %d: status.json is ahead of anything written", round)
		if st.Seq == lastAck+1 {
			unacked++
		}
		durable = st.Seq

		now, err := os.ReadFile(dir.SpecPath())
		require.NoError(t, err, "round %d: job.json", round)
		require.Equal(t, spec, now, "round %d: job.json changed", round)

		litter := removeTempLitter(t, string(dir))
		require.LessOrEqual(t, litter, 1, "round %d: one kill left %d temp files", round, litter)
		if litter > 0 {
			litterKills++
		}
		maxLitter = max(maxLitter, litter)
	}
	// Every kill landing before the first write would prove nothing.
	require.Positive(t, killsAfterAck, "no kill landed after the writer had written")
	t.Logf("%d kills in %v: %d landed after the writer's first acknowledged write, %d acknowledged writes in all, "+
		"%d kills between a rename and its acknowledgement, %d left a temp file (at most %d per kill); final seq %d",
		rounds, time.Since(began).Round(time.Millisecond), killsAfterAck, totalAcks, unacked, litterKills, maxLitter, durable)
}

// removeTempLitter removes the temp files in dir and returns how many there
// were. Any other file but the job's records fails the test.
func removeTempLitter(t *testing.T, dir string) int {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	n := 0
	for _, e := range entries {
		switch name := e.Name(); {
		case jobstore.IsTempName(name):
			n++
			require.NoError(t, os.Remove(filepath.Join(dir, name)))
		case name == jobstore.SpecFile || name == jobstore.StatusFile || name == jobstore.LockFile:
		default:
			t.Fatalf("unexpected file %q in the job directory", name)
		}
	}
	return n
}
