package jobview

import (
	"errors"
	"io"
	"io/fs"
	"os"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/remedy"
)

// This file reads the output that "jobstore work" keeps in a job
// directory (stdout.log, stderr.log) for logs, show and serve: confined to
// the job directory, never through a link, never blocking on a FIFO.

// OpenLogForRead opens the log name (StdoutFile or StderrFile) of dir for
// reading, with its size. A log that is not there is an error matching
// fs.ErrNotExist; a job directory or log that is a symbolic link, or a log
// that is not a regular file (a FIFO, a device), is a *jobstore.Error of
// kind ErrNotRegular, found without blocking and without opening anything
// it names.
func OpenLogForRead(dir jobstore.JobDir, name string) (*os.File, int64, error) {
	f, err := openLogFileForRead(string(dir), name)
	if err != nil {
		var nr *notRegularError
		if errors.As(err, &nr) {
			return nil, 0, remedy.WithCLIRemedy(&jobstore.Error{Op: "open log", Path: nr.path, Sentinel: jobstore.ErrNotRegular,
				Msg: "not a regular file (a link, a FIFO or a device): it is not read"},
				"the job's output is kept in regular files by 'jobstore work'; remove this entry")
		}
		return nil, 0, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, fi.Size(), nil
}

// notRegularError is a log or job directory that is not what it should be.
type notRegularError struct{ path string }

func (e *notRegularError) Error() string { return e.path + " is not a regular file" }

// LogTail is the end of a log: at most max bytes before its end (then
// Cut is true, and Start is where they begin), and Size, the log's size.
type LogTail struct {
	Text  []byte
	Start int64
	Size  int64
	Cut   bool
}

// ReadLogTail reads the last max bytes of the log name of dir, from
// offset from on (from < 0: the last max bytes). A missing log is an
// empty tail with found false.
func ReadLogTail(dir jobstore.JobDir, name string, from, max int64) (t LogTail, found bool, err error) {
	f, size, err := OpenLogForRead(dir, name)
	if errors.Is(err, fs.ErrNotExist) {
		return LogTail{}, false, nil
	}
	if err != nil {
		return LogTail{}, false, err
	}
	defer f.Close()
	t.Size = size
	start := from
	if start < 0 || start > size {
		start = 0
		if from > size { // the log was replaced by a shorter one
			t.Cut = true
		}
	}
	if size-start > max {
		start, t.Cut = size-max, true
	}
	t.Start = start
	t.Text = make([]byte, size-start)
	n, err := f.ReadAt(t.Text, start)
	t.Text = t.Text[:n]
	if err != nil && err != io.EOF {
		return t, true, err
	}
	return t, true, nil
}

// The files in a job directory that keep what a job's command wrote. They
// are not records: jobstore's readers, check and the sweeper leave them
// alone (no dot, so no temp name), and they are appended to, never
// replaced; past the worker's --log-limit their start is cut (cappedLog).
const (
	StdoutFile = "stdout.log"
	StderrFile = "stderr.log"
)
