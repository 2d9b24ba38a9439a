package jobstore_test

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// The tests below count the reader's attempts without any timing: inotify
// reports every open and close of a file in a watched directory, in order.

// watch is an inotify watch on one directory.
type watch struct {
	t  testing.TB
	fd int
}

// watchDir watches dir for opens and closes of the names in it. With block,
// next waits for events; without, opens drains what is queued.
func watchDir(t testing.TB, dir string, block bool) *watch {
	t.Helper()
	flags := unix.IN_CLOEXEC
	if !block {
		flags |= unix.IN_NONBLOCK
	}
	fd, err := unix.InotifyInit1(flags)
	require.NoError(t, err)
	t.Cleanup(func() { unix.Close(fd) })
	// Closes are watched too: events alternate open, close, open, ..., so the
	// kernel never merges two opens into one event.
	_, err = unix.InotifyAddWatch(fd, dir, unix.IN_OPEN|unix.IN_CLOSE_NOWRITE|unix.IN_CLOSE_WRITE)
	require.NoError(t, err)
	return &watch{t, fd}
}

type event struct {
	mask uint32
	name string
}

// read returns the events queued (waiting for one if the watch blocks), or
// nil when none is queued on a non-blocking watch.
func (w *watch) read() []event {
	buf := make([]byte, 64<<10)
	n, err := unix.Read(w.fd, buf)
	if errors.Is(err, unix.EAGAIN) {
		return nil
	}
	require.NoError(w.t, err)
	var evs []event
	for off := 0; off+unix.SizeofInotifyEvent <= n; {
		mask := binary.NativeEndian.Uint32(buf[off+4:])
		nameLen := int(binary.NativeEndian.Uint32(buf[off+12:]))
		name := strings.TrimRight(string(buf[off+unix.SizeofInotifyEvent:off+unix.SizeofInotifyEvent+nameLen]), "\x00")
		require.Zero(w.t, mask&unix.IN_Q_OVERFLOW, "inotify queue overflowed")
		evs = append(evs, event{mask, name})
		off += unix.SizeofInotifyEvent + nameLen
	}
	return evs
}

// opens drains the queued events and counts the opens of name.
func (w *watch) opens(name string) int {
	n := 0
	for evs := w.read(); evs != nil; evs = w.read() {
		for _, ev := range evs {
			if ev.name == name && ev.mask&unix.IN_OPEN != 0 {
				n++
			}
		}
	}
	return n
}

// waitReaderClose blocks until some process closes name after reading it.
func (w *watch) waitReaderClose(name string) {
	for {
		for _, ev := range w.read() {
			if ev.name == name && ev.mask&unix.IN_CLOSE_NOWRITE != 0 {
				return
			}
		}
	}
}

// TestReadJSONTolerant_RetriesExactlyNTimesReopeningEachTime: damage is read
// exactly as many times as asked, each time through a new open; what is not
// worth retrying is read once.
func TestReadJSONTolerant_RetriesExactlyNTimesReopeningEachTime(t *testing.T) {
	for _, tt := range damaged {
		for _, attempts := range []int{1, 2, 5} {
			dir := tempDir(t)
			path := filepath.Join(dir, "status.json")
			writeFile(t, path, tt.data)
			w := watchDir(t, dir, false)
			var v any
			_, err := jobstore.ReadJSONTolerant(path, &v, jobstore.WithRetries(attempts, 0))
			assert.ErrorIs(t, err, jobstore.ErrCorrupt)
			assert.Equal(t, attempts, w.opens("status.json"), "%s: %d attempts", tt.name, attempts)
		}
	}

	t.Run("defaults", func(t *testing.T) {
		dir := newJob(t, "defaults")
		writeFile(t, dir.StatusPath(), []byte(`{"state": "runn`))
		w := watchDir(t, string(dir), false)
		_, err := jobstore.ReadStatus(dir)
		assert.ErrorIs(t, err, jobstore.ErrCorrupt)
		assert.Equal(t, jobstore.DefaultReadAttempts, w.opens("status.json"))
	})

	notRetried := []struct {
		name  string
		setup func(path string)
		opts  []jobstore.ReadOption
		check func(t *testing.T, err error)
	}{
		{"valid", func(p string) { writeFile(t, p, []byte(`{}`)) }, nil,
			func(t *testing.T, err error) { assert.NoError(t, err) }},
		{"too large", func(p string) { writeFile(t, p, []byte(`{"a": 1}`)) }, []jobstore.ReadOption{jobstore.WithMaxSize(3)},
			func(t *testing.T, err error) { assert.ErrorIs(t, err, jobstore.ErrTooLarge) }},
		{"too large and torn", func(p string) { writeFile(t, p, []byte(`{"a": `)) }, []jobstore.ReadOption{jobstore.WithMaxSize(3)},
			func(t *testing.T, err error) { assert.ErrorIs(t, err, jobstore.ErrTooLarge) }},
		{"directory", func(p string) { require.NoError(t, os.Mkdir(p, 0o755)) }, nil,
			func(t *testing.T, err error) { assert.ErrorContains(t, err, "is a directory") }},
		{"wrong shape", func(p string) { writeFile(t, p, []byte(`[1, 2]`)) }, nil,
			func(t *testing.T, err error) { assert.ErrorIs(t, err, jobstore.ErrInvalid) }},
	}
	for _, tt := range notRetried {
		t.Run(tt.name, func(t *testing.T) {
			dir := tempDir(t)
			path := filepath.Join(dir, "status.json")
			tt.setup(path)
			w := watchDir(t, dir, false)
			var v map[string]any
			_, err := jobstore.ReadJSONTolerant(path, &v, append([]jobstore.ReadOption{jobstore.WithRetries(5, 0)}, tt.opts...)...)
			tt.check(t, err)
			assert.Equal(t, 1, w.opens("status.json"), "read once, not retried")
		})
	}
}

// TestReadJSONTolerant_RetriesUntilTheFileBecomesValid: status.json is
// damaged (as a writer without jobstore's protocol may leave it for a
// moment) and is repaired, by an atomic replace, as soon as the reader has
// closed it once. The reader must look again, through a new open, and return
// the repaired record. The repair waits for the reader's close (inotify), so
// the only timing is the pause between attempts, kept generous
// (repairAttempts × repairDelay) so that a loaded machine cannot make the
// repair land after the last attempt. The exact number of attempts is
// checked by TestReadJSONTolerant_RetriesExactlyNTimesReopeningEachTime.
func TestReadJSONTolerant_RetriesUntilTheFileBecomesValid(t *testing.T) {
	const repairAttempts, repairDelay = 100, 20 * time.Millisecond
	for _, tt := range damaged {
		t.Run(tt.name, func(t *testing.T) {
			dir := tempDir(t)
			path := filepath.Join(dir, "status.json")
			writeFile(t, path, tt.data)
			closes, opens := watchDir(t, dir, true), watchDir(t, dir, false)

			repaired := make(chan error, 1)
			go func() {
				closes.waitReaderClose("status.json")
				repaired <- jobstore.WriteJSONAtomic(path, map[string]any{"seq": 5, "state": "running"})
			}()
			var v struct {
				Seq   int    `json:"seq"`
				State string `json:"state"`
			}
			found, err := jobstore.ReadJSONTolerant(path, &v, jobstore.WithRetries(repairAttempts, repairDelay))
			require.NoError(t, err, "the reader must look again until the file is valid")
			require.NoError(t, <-repaired)
			assert.True(t, found)
			assert.Equal(t, 5, v.Seq)
			assert.Equal(t, "running", v.State)
			assert.GreaterOrEqual(t, opens.opens("status.json"), 2, "each attempt reopens the file")
		})
	}
}
