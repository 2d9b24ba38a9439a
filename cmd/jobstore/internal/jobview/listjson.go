package jobview

import (
	"time"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/remedy"
)

type ListJSON struct {
	Root  string         `json:"root"`
	Jobs  []ListJobJSON  `json:"jobs"`
	Index *IndexNoteJSON `json:"index,omitempty"`
}

type ListJobJSON struct {
	ID     string              `json:"job_id"`
	Dir    string              `json:"dir"`
	Spec   *jobstore.JobSpec   `json:"spec"`
	Status *jobstore.JobStatus `json:"status"`
	Error  *remedy.ErrorJSON   `json:"error"`
	DueJSON
	ListCancelJSON
}

type IndexNoteJSON struct {
	Path       string    `json:"path"`
	BuiltAt    time.Time `json:"built_at"`
	Jobs       int       `json:"jobs"`
	Unreadable int       `json:"unreadable"`
}

// NewListJSON is entries as list --json prints them, each job's cancel
// request from cancelOf.
func NewListJSON(root string, entries []jobstore.Entry, cancelOf func(jobstore.JobDir) *jobstore.CancelRequest) ListJSON {
	out := ListJSON{Root: root, Jobs: []ListJobJSON{}}
	for _, en := range entries {
		out.Jobs = append(out.Jobs, ListJobJSON{ID: en.Dir.ID(), Dir: string(en.Dir),
			Spec: en.Spec, Status: en.Status, Error: remedy.NewErrorJSON(en.Err), DueJSON: NewDueJSON(en.Spec, en.Status),
			ListCancelJSON: ListCancelJSON{cancelOf(en.Dir)}})
	}
	return out
}
