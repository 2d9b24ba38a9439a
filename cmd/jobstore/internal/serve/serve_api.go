package serve

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/jobview"
)

// This file is serve's API for scripts: /api/jobs and /api/jobs/ID, in
// the shapes of list --json and show --json.

// apiJobs answers the jobs as list --json prints them, filtered as the
// list flags filter (?state=, ?kind=, ?label=k=v, ?search=, ?limit=,
// ?order=newest|oldest), from what the server has learned from WatchRoot.
func (s *server) apiJobs(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := &jobview.JobFilter{Text: q.Get("search"), Newest: q.Get("order") == "newest", Labels: map[string]string{}}
	for _, v := range q["state"] {
		f.States = append(f.States, strings.Split(v, ",")...)
	}
	for _, v := range q["kind"] {
		f.Kinds = append(f.Kinds, strings.Split(v, ",")...)
	}
	for _, v := range q["label"] {
		k, val, ok := strings.Cut(v, "=")
		if !ok || k == "" {
			writeJSONAnswer(w, http.StatusBadRequest, map[string]string{"error": "label must be k=v, got " + strconv.Quote(v)})
			return
		}
		f.Labels[k] = val
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			writeJSONAnswer(w, http.StatusBadRequest, map[string]string{"error": "limit must be a number >= 0, got " + strconv.Quote(v)})
			return
		}
		f.Limit = n
	}
	entries, jobs, _ := s.table.snapshot()
	chosen, _ := f.Apply(entries)
	writeJSONAnswer(w, http.StatusOK, jobview.NewListJSON(s.cfg.root, chosen, func(dir jobstore.JobDir) *jobstore.CancelRequest {
		if j := jobs[dir]; j != nil {
			return j.Cancel
		}
		return nil
	}))
}

// apiJob answers the job as show --json prints it, read now.
func (s *server) apiJob(w http.ResponseWriter, r *http.Request) {
	dir, ok := s.jobDir(r.PathValue("id"))
	if !ok {
		notFound(w)
		return
	}
	j := jobview.ReadJob(dir)
	if j.Spec == nil && !j.SpecInfo.Present {
		notFound(w)
		return
	}
	writeJSONAnswer(w, http.StatusOK, jobview.NewShowJSON(j))
}
