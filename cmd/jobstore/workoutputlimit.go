package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// defaultLogLimit is how many bytes of stdout.log and of stderr.log a
// worker keeps at most (--log-limit), and minLogLimit the least it accepts.
const (
	defaultLogLimit = 64 << 20
	minLogLimit     = 4096
)

// cutNote opens an output file whose start was cut; cutNoteRE reads it
// back, so that a later cut (by this worker or another) adds to the count.
const cutNote = "[jobstore: the first %d bytes of this output were dropped to keep it under %d bytes]\n"

var cutNoteRE = regexp.MustCompile(`^\[jobstore: the first (\d+) bytes of this output were dropped to keep it under \d+ bytes\]\n`)

// maxCutNote is the longest cutNote can be (two 19-digit numbers).
const maxCutNote = 128

// cutBuffer is how much a cut copies at a time.
const cutBuffer = 64 << 10

// cappedLog is one of a job's output files (stdout.log, stderr.log),
// appended to through the worker, that keeps the last part of what was
// written when it grows past limit bytes: the file then holds cutNote
// (how many bytes were dropped so far) and the last (limit-maxCutNote)/2
// bytes or more, and grows again to limit before the next cut. Writes
// never fail: the first error is kept (Err) and later writes are dropped,
// so that the command never blocks or dies on its output. The mechanism
// and its guarantees are in docs/format.md.
type cappedLog struct {
	f     *os.File
	name  string
	limit int64 // 0: no limit

	mu      sync.Mutex
	size    int64 // the file's size, as written through f
	head    int64 // the length of the cut note that opens the file; 0: none
	dropped int64 // the bytes cut from the file's start so far
	written int64 // the bytes written through this cappedLog
	err     error

	// cutStep, when set (by tests only), is called before each step of a
	// cut (each copy of cutBuffer bytes, the note, the truncation); an
	// error ends the cut there, as the worker's death would.
	cutStep func() error
}

// openLog opens name with open (jobstore.Run's OpenFile: in the job
// directory the run holds, never through a link) to add to what it holds,
// at most limit bytes kept (0: no limit).
func openLog(open func(name string) (*os.File, error), name string, limit int64) (*cappedLog, error) {
	f, err := open(name)
	if err != nil {
		return nil, err
	}
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		f.Close()
		return nil, err
	}
	l := &cappedLog{f: f, name: name, limit: limit, size: size}
	head := make([]byte, min(size, maxCutNote))
	if n, _ := f.ReadAt(head, 0); n > 0 {
		if m := cutNoteRE.FindSubmatch(head[:n]); m != nil {
			l.head = int64(len(m[0]))
			l.dropped, _ = strconv.ParseInt(string(m[1]), 10, 64)
		}
	}
	return l, nil
}

// Write adds p to the file, then cuts its start if it is over the limit.
// It always reports success.
func (l *cappedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return len(p), nil
	}
	n, err := l.f.Write(p)
	l.size += int64(n)
	l.written += int64(n)
	if err == nil && l.limit > 0 && l.size > l.limit {
		err = l.cut()
	}
	if err != nil {
		l.err = fmt.Errorf("%s: after %d bytes: %w", l.name, l.written, err)
	}
	return len(p), nil
}

// cut keeps the file's last keep bytes behind a new cut note. They are
// copied to the front from first to last, and the place they go ends
// before the place they come from begins (limit > 2*keep + maxCutNote):
// until the truncation at the end, the file still ends with them, whole,
// whatever happens midway.
func (l *cappedLog) cut() error {
	keep := (l.limit - maxCutNote) / 2
	from := l.size - keep
	dropped := l.dropped + from - l.head
	note := fmt.Appendf(nil, cutNote, dropped, l.limit)
	step := func() error {
		if l.cutStep == nil {
			return nil
		}
		return l.cutStep()
	}
	buf := make([]byte, min(keep, cutBuffer))
	for off := int64(0); off < keep; {
		if err := step(); err != nil {
			return err
		}
		n := min(int64(len(buf)), keep-off)
		if _, err := l.f.ReadAt(buf[:n], from+off); err != nil {
			return fmt.Errorf("cut its start: %w", err)
		}
		if _, err := l.f.WriteAt(buf[:n], int64(len(note))+off); err != nil {
			return fmt.Errorf("cut its start: %w", err)
		}
		off += n
	}
	if err := step(); err != nil {
		return err
	}
	if _, err := l.f.WriteAt(note, 0); err != nil {
		return fmt.Errorf("cut its start: %w", err)
	}
	size := int64(len(note)) + keep
	if err := step(); err != nil {
		return err
	}
	if err := l.f.Truncate(size); err != nil {
		return fmt.Errorf("cut its start: %w", err)
	}
	if _, err := l.f.Seek(size, io.SeekStart); err != nil {
		return fmt.Errorf("cut its start: %w", err)
	}
	l.size, l.head, l.dropped = size, int64(len(note)), dropped
	return nil
}

// Err is the first error writing the file, naming it; nil if none.
func (l *cappedLog) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// Close closes the file.
func (l *cappedLog) Close() error { return l.f.Close() }

// sizeFlag is a flag that holds a number of bytes, written as a number
// with an optional unit: KiB, MiB or GiB (1024, 1024², 1024³).
type sizeFlag int64

var sizeUnits = []struct {
	name string
	n    int64
}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}}

func (s *sizeFlag) String() string {
	for _, u := range sizeUnits {
		if *s != 0 && int64(*s)%u.n == 0 {
			return fmt.Sprintf("%d%s", int64(*s)/u.n, u.name)
		}
	}
	return strconv.FormatInt(int64(*s), 10)
}

// Type is pflag's name for the value: "value", as the usage text shows it.
func (s *sizeFlag) Type() string { return "value" }

func (s *sizeFlag) Set(v string) error {
	num, mult := v, int64(1)
	for _, u := range sizeUnits {
		if n, ok := strings.CutSuffix(v, u.name); ok {
			num, mult = n, u.n
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64/mult {
		return fmt.Errorf("%q is not a size: give a number of bytes, maybe with a unit (KiB, MiB, GiB)", v)
	}
	*s = sizeFlag(n * mult)
	return nil
}
