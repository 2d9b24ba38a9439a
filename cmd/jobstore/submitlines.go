package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/remedy"
)

// submitLines is `submit ROOT --jsonl`: one spec per line of r, as job.json
// holds it, submitted as one batch (jobstore.SubmitMany).
type submitLines struct {
	root string
	by   string // submitted_by of a spec that names none
}

// oneJobFlags are the flags of submit that describe one job: refused with
// --jsonl, where each line describes its own.
var oneJobFlags = []string{"kind", "params", "id", "label", "max-attempts", "backoff", "max-backoff", "not-before", "priority", "timeout"}

// checkOneJobFlags refuses, with --jsonl, a flag that describes one job.
func checkOneJobFlags(fs *pflag.FlagSet, args []string) error {
	for _, name := range oneJobFlags {
		if fs.Changed(name) {
			return &remedy.UsageError{Msg: flagSpelling(args, name) + " describes one job; with --jsonl each line describes its own",
				Remedy: `put the field in each line, e.g. {"kind": "render", "params": {"frame": 1}}`}
		}
	}
	return nil
}

// run reads every line of r, refusing the whole input (exit 2, nothing
// submitted) if a line is not a spec, then submits them and prints each
// job's ID, in the order of the lines, as it was made.
func (s submitLines) run(e *env, r io.Reader) error {
	specs, err := readSpecLines(r, s.by)
	if err != nil {
		return err
	}
	dirs, err := jobstore.SubmitMany(s.root, specs)
	for _, d := range dirs {
		fmt.Fprintln(e.stdout, d.ID())
	}
	return err
}

// readSpecLines reads r's lines as specs; blank lines are skipped. A line
// over a record's size limit, one that is not a valid spec, or one whose
// job_id an earlier line has, is a usage error naming its number.
func readSpecLines(r io.Reader, by string) ([]jobstore.JobSpec, error) {
	br := bufio.NewReader(r)
	var specs []jobstore.JobSpec
	lineOf := map[string]int{} // job ID -> the line that gave it
	for n := 1; ; n++ {
		line, err := readLine(br, jobstore.DefaultMaxSize)
		if errors.Is(err, errLineTooLong) {
			return nil, &remedy.UsageError{Msg: fmt.Sprintf("stdin line %d: longer than %d bytes, the most a job record may hold", n, jobstore.DefaultMaxSize),
				Remedy: "keep bulky data in a file and give its path in params; nothing was submitted"}
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("read stdin: %w", err)
		}
		if line = bytes.TrimSpace(line); len(line) > 0 {
			spec, perr := parseSpecLine(line, by)
			if k, ok := lineOf[spec.ID]; ok && perr == nil {
				perr = fmt.Errorf("job_id %q is line %d's too", spec.ID, k)
			}
			if perr != nil {
				return nil, &remedy.UsageError{Msg: fmt.Sprintf("stdin line %d: %s", n, specProblem(perr)),
					Remedy: `give one JSON object per line, a spec as job.json holds it, each with its own job_id or none: {"kind": "render", "params": {"frame": 1}}; nothing was submitted`}
			}
			lineOf[spec.ID] = n
			specs = append(specs, spec)
		}
		if err != nil {
			return specs, nil
		}
	}
}

// parseSpecLine decodes one line, a JSON object, as job.json is decoded
// (jobstore.DecodeSpec: every field checked), with what a submitter
// leaves out filled in: schema_version (the current one), job_id (a new
// one, jobstore.NewJobID), submitted_at (now) and submitted_by (by).
func parseSpecLine(line []byte, by string) (jobstore.JobSpec, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(line, &fields); err != nil || fields == nil {
		return jobstore.JobSpec{}, errors.New("not one JSON object")
	}
	fill := func(name string, v any) {
		if _, ok := fields[name]; !ok {
			fields[name], _ = json.Marshal(v) // a string or an int: never fails
		}
	}
	fill("schema_version", jobstore.JobSchemaVersion)
	fill("job_id", jobstore.NewJobID())
	fill("submitted_at", jobstore.Now())
	if by != "" {
		fill("submitted_by", by)
	}
	data, err := json.Marshal(fields)
	if err != nil {
		return jobstore.JobSpec{}, err
	}
	spec, _, err := jobstore.DecodeSpec(data)
	return spec, err
}

// specProblem is what a line's spec error says, without the remedy of a
// record on disk.
func specProblem(err error) string {
	var je *jobstore.Error
	if !errors.As(err, &je) {
		return err.Error()
	}
	msg := je.Msg
	if je.Subject != "" {
		msg = je.Subject + ": " + msg
	}
	if je.Err != nil {
		msg += ": " + je.Err.Error()
	}
	return msg
}

var errLineTooLong = errors.New("line too long")

// readLine reads a line of br without its newline; one longer than limit
// is errLineTooLong, read no further than limit+1 bytes. At the end of
// the input it returns what was left and io.EOF.
func readLine(br *bufio.Reader, limit int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > limit+1 || len(line) == limit+1 && line[limit] != '\n' {
			return nil, errLineTooLong
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return bytes.TrimSuffix(line, []byte("\n")), err
		}
	}
}
