package jobstore

import (
	"encoding/json"
	"errors"
	"io/fs"
	"path/filepath"
	"time"
)

// indexSchemaVersion is the schema version of index.json this package writes
// and reads.
const indexSchemaVersion = 1

// IndexRow summarises one readable job in index.json, from its job.json and
// status.json. The fields, with their JSON names:
//
//   - ID (job_id): the job ID.
//   - Kind (kind): job.json's kind.
//   - State (state, optional): status.json's state; empty, and left out of
//     the file, when the job has no status yet.
//   - Progress (progress, optional): status.json's progress; nil when
//     unknown or when there is no status yet.
//   - Seq (seq): status.json's seq; 0 when there is no status yet.
//   - SubmittedAt (submitted_at): job.json's submitted_at.
//   - UpdatedAt (updated_at, optional): status.json's updated_at; nil when
//     there is no status yet.
//
// Timestamps are written as in the records (see Now).
type IndexRow struct {
	ID          string     `json:"job_id"`
	Kind        string     `json:"kind"`
	State       State      `json:"state,omitempty"` // empty: no status yet
	Progress    *float64   `json:"progress,omitempty"`
	Seq         uint64     `json:"seq"`
	SubmittedAt time.Time  `json:"submitted_at"`
	UpdatedAt   *time.Time `json:"updated_at,omitempty"`
}

// IndexProblem names a directory under the root that could not be read as
// a job, and why: ID (job_id) is the directory's name, which need not be a
// valid job ID, and Reason (reason) is the error's text, remedy included.
type IndexProblem struct {
	ID     string `json:"job_id"`
	Reason string `json:"reason"`
}

// Index is index.json: a cache of List for pollers that want one file
// instead of thousands. The job directories stay authoritative; BuiltAt says
// how old the cache is. Its JSON Schema is docs/schema/index.schema.json in
// the repository. The fields, with their JSON names:
//
//   - SchemaVersion (schema_version): 1, the version this package writes;
//     ReadIndex refuses an older one (a missing one included) with
//     ErrNoMigration and a newer one with ErrNewerSchema; the remedy of both
//     is RebuildIndex.
//   - BuiltAt (built_at): when RebuildIndex built it.
//   - Jobs (jobs): a row per readable job, in List's order (by submitted_at,
//     then ID); never null in the file.
//   - Unreadable (unreadable): a problem per directory that could not be
//     read; never null in the file.
type Index struct {
	SchemaVersion int            `json:"schema_version"`
	BuiltAt       time.Time      `json:"built_at"`
	Jobs          []IndexRow     `json:"jobs"`
	Unreadable    []IndexProblem `json:"unreadable"`
}

// RebuildIndex lists root (see List) and writes <root>/index.json atomically
// and durably (WriteJSONAtomic): a row per job whose job.json and status.json
// (if any) are readable, in List's order, and a problem per other directory
// with its error as the reason. It also removes what crashed writers left
// in root itself once it is older than DefaultSweepAge: index temp files of
// a crashed rebuild, the hidden build directories of a crashed Submit and
// the hidden directories of a removal that did not finish (see
// ReconcileAll; job directories are left to it). root may be reached
// through symbolic links. It returns the index written.
func RebuildIndex(root string) (*Index, error) {
	entries, err := List(root)
	if err != nil {
		return nil, err
	}
	idx := &Index{SchemaVersion: indexSchemaVersion, BuiltAt: Now(), Jobs: []IndexRow{}, Unreadable: []IndexProblem{}}
	for _, e := range entries {
		if e.Err != nil || e.Spec == nil {
			reason := "unreadable"
			if e.Err != nil {
				reason = e.Err.Error()
			}
			idx.Unreadable = append(idx.Unreadable, IndexProblem{ID: e.Dir.ID(), Reason: reason})
			continue
		}
		row := IndexRow{ID: e.Spec.ID, Kind: e.Spec.Kind, SubmittedAt: e.Spec.SubmittedAt}
		if st := e.Status; st != nil {
			updated := st.UpdatedAt
			row.State, row.Progress, row.Seq, row.UpdatedAt = st.State, clonePtr(st.Progress), st.Seq, &updated
		}
		idx.Jobs = append(idx.Jobs, row)
	}
	if err := WriteJSONAtomic(filepath.Join(root, IndexFile), idx); err != nil {
		return nil, err
	}
	_, _, _ = sweepRoot("rebuild index", root, time.Now().Add(-DefaultSweepAge)) // housekeeping: a failure here is not the rebuild's
	return idx, nil
}

// ReadIndex reads <root>/index.json tolerantly (see ReadJSONTolerant), by
// the records' version rule. A missing index matches fs.ErrNotExist; an
// index from a newer jobstore is ErrNewerSchema, and one of an older
// version (there is none yet: a missing schema_version is 0) is
// ErrNoMigration, both with the remedy of rebuilding it.
func ReadIndex(root string) (*Index, error) {
	const op = "read index"
	path := filepath.Join(root, IndexFile)
	var idx Index
	found, err := readPathTolerant(op, path, newReadOptions(nil), func(b []byte) error {
		_, err := decodeRecord(b, indexSchema(), &idx)
		return err
	})
	if errors.Is(err, ErrNewerSchema) || errors.Is(err, ErrNoMigration) {
		err = annotated(err, func(e *Error) {
			e.Remedy = "rebuild the index with this version (RebuildIndex, jobstore list --rebuild), or upgrade jobstore"
		})
	}
	if err != nil {
		return nil, withPath(err, op, path)
	}
	if !found {
		return nil, errIO(op, path, fs.ErrNotExist, "there is no index yet",
			"build it with RebuildIndex (jobstore list --rebuild), or read the job directories with List")
	}
	return &idx, nil
}

type indexRowJSON struct {
	ID          string   `json:"job_id"`
	Kind        string   `json:"kind"`
	State       State    `json:"state,omitempty"`
	Progress    *float64 `json:"progress,omitempty"`
	Seq         uint64   `json:"seq"`
	SubmittedAt isoTime  `json:"submitted_at"`
	UpdatedAt   *isoTime `json:"updated_at,omitempty"`
}

// MarshalJSON writes the index format (timestamps as in the records).
func (r IndexRow) MarshalJSON() ([]byte, error) {
	return encodeJSON(indexRowJSON{r.ID, r.Kind, r.State, r.Progress, r.Seq, isoTime(r.SubmittedAt), timePtr(r.UpdatedAt)}, "")
}

// UnmarshalJSON reads the index format.
func (r *IndexRow) UnmarshalJSON(b []byte) error {
	var j indexRowJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*r = IndexRow{j.ID, j.Kind, j.State, j.Progress, j.Seq, time.Time(j.SubmittedAt), (*time.Time)(j.UpdatedAt)}
	return nil
}

type indexJSON struct {
	SchemaVersion int            `json:"schema_version"`
	BuiltAt       isoTime        `json:"built_at"`
	Jobs          []IndexRow     `json:"jobs"`
	Unreadable    []IndexProblem `json:"unreadable"`
}

// MarshalJSON writes the index format (timestamps as in the records).
func (x Index) MarshalJSON() ([]byte, error) {
	return encodeJSON(indexJSON{x.SchemaVersion, isoTime(x.BuiltAt), x.Jobs, x.Unreadable}, "")
}

// UnmarshalJSON reads the index format.
func (x *Index) UnmarshalJSON(b []byte) error { return x.decode(b) }

// decode: see JobSpec.decode.
func (x *Index) decode(b []byte) error {
	var j indexJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*x = Index{j.SchemaVersion, time.Time(j.BuiltAt), j.Jobs, j.Unreadable}
	return nil
}

func indexSchema() recordSchema { return recordSchema{file: IndexFile, current: indexSchemaVersion} }

func (x *Index) recordVersion() int { return x.SchemaVersion }

func (x *Index) setRecordVersion(v int) { x.SchemaVersion = v }
