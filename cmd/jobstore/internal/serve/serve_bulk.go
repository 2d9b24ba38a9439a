package serve

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/jobview"
	"github.com/axqua/jobstore/cmd/jobstore/internal/remedy"
	"github.com/axqua/jobstore/cmd/jobstore/internal/termtext"
)

// This file is the root page's bulk actions: remove the selected jobs,
// retry every failed job the page's filters choose. Each is a POST with
// the token and the root page's CSRF token, answered first by a page that
// names the jobs and asks to confirm (a POST again, with confirm=yes),
// then by a page that says what was done to each.

// Limits of a bulk action: the most jobs one names, and its request body.
const (
	maxBulkJobs  = 10000
	maxBulkBytes = 1 << 20
)

// bulkView is what bulk.html renders: a confirmation (Confirm) or what
// was done (Done, Failed).
type bulkView struct {
	Action, Title string
	Back          string
	CSRF          string
	IDs           []string // the jobs to act on
	Confirm       bool
	Done          []string
	Failed        []field // job ID, why not
}

func (s *server) bulkAction(w http.ResponseWriter, r *http.Request) {
	action := r.PathValue("action")
	if action != "remove" && action != "retry" {
		http.NotFound(w, r)
		return
	}
	back := "/"
	if !s.mayChange(w, r, back) {
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxBulkBytes)
	if err := r.ParseForm(); err != nil || !s.validScoped("list", r.PostForm.Get("csrf")) {
		s.refuse(w, http.StatusForbidden, "refused", "the form's CSRF token is missing or wrong: reload the list and try again", back)
		return
	}
	if list, ok := listAddress(r.PostForm.Get("back")); ok {
		back = list
	}
	ids := r.PostForm["id"]
	if action == "retry" && len(ids) == 0 && r.PostForm.Get("confirm") != "yes" {
		ids = s.retryable(parseRowsQuery(r.PostForm))
	}
	if len(ids) > maxBulkJobs {
		s.refuse(w, http.StatusRequestEntityTooLarge, action+" refused", fmt.Sprintf("%d jobs named: at most %d at a time", len(ids), maxBulkJobs), back)
		return
	}
	v := bulkView{Action: action, Back: back, CSRF: s.listCSRF(), IDs: ids}
	if r.PostForm.Get("confirm") != "yes" {
		v.Confirm = true
		v.Title = action + " " + termtext.Plural(len(ids), "job") + "?"
		if len(ids) == 0 {
			v.Title = "no job to " + action
		}
		s.render(w, "bulk.html", v)
		return
	}
	for _, id := range ids {
		dir, ok := s.jobDir(id)
		if !ok {
			v.Failed = append(v.Failed, field{id, "no such job under this root"})
			continue
		}
		if err := actOn(action, dir); err != nil {
			v.Failed = append(v.Failed, field{id, termtext.OneLine(remedy.ErrorLine(err))})
			continue
		}
		v.Done = append(v.Done, id)
	}
	v.Title = fmt.Sprintf("%s: %d done, %d not", action, len(v.Done), len(v.Failed))
	s.render(w, "bulk.html", v)
}

// actOn does action (remove, retry) to the job of dir.
func actOn(action string, dir jobstore.JobDir) error {
	switch action {
	case "remove":
		return jobstore.Remove(dir)
	case "retry":
		return jobstore.Retry(dir)
	}
	return errors.New("no such action: " + action)
}

// retryable are the IDs of the failed jobs that rq's filters choose (all
// of its pages), oldest first.
func (s *server) retryable(rq rowsQuery) []string {
	entries, _, _ := s.table.snapshot()
	chosen, _ := rq.chosen(entries, time.Now())
	var ids []string
	for _, en := range chosen {
		if jobview.EntryState(en) == string(jobstore.Failed) {
			ids = append(ids, en.Dir.ID())
		}
	}
	return ids
}

// failedCount is how many failed jobs rq's filters choose.
func (s *server) failedCount(rq rowsQuery) int { return len(s.retryable(rq)) }

// listFlash is what the root page says after an action, from its query.
func listFlash(q url.Values) string {
	id := q.Get("id")
	switch q.Get("done") {
	case "removed":
		return "removed job " + id
	case "retry":
		return "queued job " + id + " again"
	case "cancel":
		return "cancel requested for job " + id
	}
	return ""
}

// rowActions are the actions a row in state offers: cancel while it may
// run, retry once it failed, was lost or cancelled (Retry's rule), remove
// once it ended.
func rowActions(state string) []string {
	switch jobstore.State(state) {
	case jobstore.Queued, jobstore.Running:
		return []string{"cancel"}
	case jobstore.Failed, jobstore.Lost, jobstore.Cancelled:
		return []string{"retry", "remove"}
	case jobstore.Succeeded:
		return []string{"remove"}
	}
	return nil
}

// actionPath is where a row's button posts: the job's action, but remove,
// which goes through the bulk removal's confirmation.
func actionPath(action, id string) string {
	if action == "remove" {
		return "/bulk/remove"
	}
	return "/jobs/" + url.PathEscape(id) + "/" + action
}
