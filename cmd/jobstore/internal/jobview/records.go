package jobview

import (
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/remedy"
)

// RecordInfo describes one record file of a job as found on disk: whether it
// is there, the schema_version written in it, and whether reading it meant
// migrating it in memory (the file itself is never rewritten by a reader).
type RecordInfo struct {
	File    string `json:"file"`    // job.json or status.json
	Present bool   `json:"present"` // false: no such file
	// Written is the file's schema_version as written (a missing one is 0);
	// nil when the file holds no readable version.
	Written *int `json:"schema_version_written"`
	// Current is the version this jobstore writes and reads.
	Current int `json:"schema_version_current"`
	// Migrated: the record was read by migrating it from Written to Current.
	Migrated bool              `json:"migrated_in_memory"`
	Err      error             `json:"-"`
	ErrJSON  *remedy.ErrorJSON `json:"error"` // Err, filled in for JSON output
}

// JobRecords is one job directory as read by show and check.
type JobRecords struct {
	Dir        jobstore.JobDir
	Spec       *jobstore.JobSpec
	Status     *jobstore.JobStatus
	SpecInfo   RecordInfo
	StatusInfo RecordInfo
}

// ReadJob reads both records of dir the way ReadSpec and ReadStatus do
// (the tolerant reader's retries, then DecodeSpec or DecodeStatus, which
// migrate and validate), from one read of each file, so that the version
// reported is the version of the bytes that were decoded.
//
// A job directory that is a symbolic link is read as the library reads it:
// not at all (SpecInfo.Err is its ErrNotRegular).
func ReadJob(dir jobstore.JobDir) JobRecords {
	dir = JobDirArg(string(dir))
	j := JobRecords{Dir: dir}
	if err := linkedJobDir(dir); err != nil {
		j.SpecInfo = RecordInfo{File: jobstore.SpecFile, Current: jobstore.JobSchemaVersion, Err: err}
		j.StatusInfo = RecordInfo{File: jobstore.StatusFile, Current: jobstore.StatusSchemaVersion}
		return j
	}
	var specRaw, statusRaw json.RawMessage
	j.SpecInfo = readRecord(dir.SpecPath(), jobstore.SpecFile, "read spec", jobstore.JobSchemaVersion, &specRaw)
	if j.SpecInfo.Err == nil && !j.SpecInfo.Present {
		_, j.SpecInfo.Err = jobstore.ReadSpec(dir) // no job.json: the library's own ErrNotJob
	}
	if j.SpecInfo.Err == nil && j.SpecInfo.Present {
		spec, migrated, err := jobstore.DecodeSpec(specRaw)
		if err == nil {
			j.Spec = &spec
		}
		j.SpecInfo.Migrated = migrated
		j.SpecInfo.Err = at(err, "read spec", dir.SpecPath())
	}
	j.StatusInfo = readRecord(dir.StatusPath(), jobstore.StatusFile, "read status", jobstore.StatusSchemaVersion, &statusRaw)
	if j.StatusInfo.Err == nil && j.StatusInfo.Present {
		st, migrated, err := jobstore.DecodeStatus(statusRaw)
		j.Status = st
		j.StatusInfo.Migrated = migrated
		j.StatusInfo.Err = at(err, "read status", dir.StatusPath())
	}
	return j
}

// readRecord reads path's bytes with the tolerant reader into raw and notes
// the schema_version they carry.
func readRecord(path, file, op string, current int, raw *json.RawMessage) RecordInfo {
	info := RecordInfo{File: file, Current: current}
	found, err := jobstore.ReadJSONTolerant(path, raw)
	info.Present = found
	if err != nil {
		info.Err = at(err, op, path)
		return info
	}
	if found {
		info.Written = WrittenVersion(*raw)
	}
	return info
}

// WrittenVersion is the schema_version in a record's bytes (0 when absent,
// as every reader reads it), or nil when there is none to read.
func WrittenVersion(raw []byte) *int {
	v, err := jobstore.SchemaVersionOf(raw)
	if err != nil {
		return nil
	}
	return &v
}

// at names the operation and file of a decode error (DecodeSpec and
// DecodeStatus know neither).
func at(err error, op, path string) error {
	e, ok := err.(*jobstore.Error)
	if !ok {
		return err
	}
	c := *e // the library's error stays as it was
	if c.Path == "" {
		c.Path = path
	}
	if c.Op == "" || c.Op == "read" {
		c.Op = op
	}
	return &c
}

// Exists reports whether path names something (a broken symlink counts).
func Exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// JobDirArg is a command's job directory argument as the library reads
// every JobDir (filepath.Clean): "ROOT/ID/" and "ROOT/ID/." name ROOT/ID,
// whose own entry is then looked at, never the target of a link there.
func JobDirArg(arg string) jobstore.JobDir {
	if arg == "" {
		return ""
	}
	return jobstore.JobDir(filepath.Clean(arg))
}

// linkedJobDir is the library's error for a job directory whose own entry
// is a symbolic link (or another entry that is neither a directory nor a
// regular file): every command refuses it as the library does, and reads
// nothing through it. nil for anything else, which the command reads.
func linkedJobDir(dir jobstore.JobDir) error {
	fi, err := os.Lstat(string(dir))
	if err != nil || fi.IsDir() || fi.Mode().IsRegular() {
		return nil
	}
	_, err = jobstore.ReadSpec(dir) // ErrNotRegular, naming the link
	if err == nil {
		// Swapped for a directory meanwhile: read what is there now.
		return nil
	}
	return err
}
