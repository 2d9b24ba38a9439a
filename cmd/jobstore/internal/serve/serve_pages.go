package serve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/jobview"
	"github.com/axqua/jobstore/cmd/jobstore/internal/remedy"
	"github.com/axqua/jobstore/cmd/jobstore/internal/termtext"
)

// This file is serve's two pages: the root's (rows, counts, filters) and
// a job's (spec, status, output, actions), rendered with html/template
// from web/*.html; their scripts (web/static) keep them current.

// pageSize is how many rows the root's page shows at a time;
// maxPageSize the most ?size= may ask for.
const (
	pageSize    = 100
	maxPageSize = 1000
)

// rowsQuery is the root page's choice of rows, from its URL.
type rowsQuery struct {
	State, Kind, Search, Order string
	Page, Size                 int
}

func parseRowsQuery(q url.Values) rowsQuery {
	rq := rowsQuery{State: q.Get("state"), Kind: q.Get("kind"), Search: q.Get("q"), Order: q.Get("order"), Page: 1, Size: pageSize}
	if rq.Order != "oldest" {
		rq.Order = "newest"
	}
	if n, err := strconv.Atoi(q.Get("page")); err == nil && n > 0 {
		rq.Page = n
	}
	if n, err := strconv.Atoi(q.Get("size")); err == nil && n > 0 {
		rq.Size = min(n, maxPageSize)
	}
	return rq
}

func (rq rowsQuery) filter() *jobview.JobFilter {
	f := &jobview.JobFilter{Text: rq.Search, Newest: rq.Order == "newest"}
	switch {
	case jobview.IsScheduleState(rq.State):
		f.States = []string{string(jobstore.Queued)}
	case rq.State != "":
		f.States = []string{rq.State}
	}
	if rq.Kind != "" {
		f.Kinds = []string{rq.Kind}
	}
	return f
}

// chosen are the entries the query chooses, in its order, at now.
func (rq rowsQuery) chosen(entries []jobstore.Entry, now time.Time) ([]jobstore.Entry, int) {
	chosen, n := rq.filter().Apply(entries)
	if !jobview.IsScheduleState(rq.State) {
		return chosen, n
	}
	kept := chosen[:0]
	for _, en := range chosen {
		if jobview.WaitState(en, now) == rq.State {
			kept = append(kept, en)
		}
	}
	return kept, len(kept)
}

// with is the page's address with key set to value (and the first page,
// unless key is "page").
func (rq rowsQuery) with(key, value string) string {
	q := url.Values{}
	set := func(k, v string) {
		if v != "" {
			q.Set(k, v)
		}
	}
	set("state", rq.State)
	set("kind", rq.Kind)
	set("q", rq.Search)
	if rq.Order != "newest" {
		set("order", rq.Order)
	}
	q.Del(key)
	set(key, value)
	return "/?" + q.Encode()
}

// rowsPage is one page of rows, as /api/rows sends it and the root page
// renders it.
type rowsPage struct {
	Rows    []pageRow      `json:"rows"`
	Matched int            `json:"matched"` // rows the filters choose
	Total   int            `json:"total"`   // jobs under the root
	Page    int            `json:"page"`
	Pages   int            `json:"pages"`
	Size    int            `json:"size"`
	Counts  map[string]int `json:"counts"`
	Kinds   []string       `json:"kinds"`
	Error   string         `json:"error"` // the root cannot be read now
}

// maxKinds is the most kinds the kind filter offers.
const maxKinds = 500

func (s *server) rowsPage(rq rowsQuery) rowsPage {
	entries, jobs, rootErr := s.table.snapshot()
	chosen, matched := rq.chosen(entries, time.Now())
	pages := max((matched+rq.Size-1)/rq.Size, 1)
	page := min(rq.Page, pages)
	lo := min((page-1)*rq.Size, matched)
	hi := min(lo+rq.Size, matched)
	out := rowsPage{Rows: []pageRow{}, Matched: matched, Total: len(entries), Page: page, Pages: pages, Size: rq.Size,
		Counts: s.table.counts(), Kinds: []string{}}
	for _, en := range chosen[lo:hi] {
		out.Rows = append(out.Rows, newPageRow(en, jobs[en.Dir]))
	}
	kinds := map[string]bool{}
	for _, en := range entries {
		if en.Spec != nil && len(kinds) < maxKinds {
			kinds[en.Spec.Kind] = true
		}
	}
	for k := range kinds {
		out.Kinds = append(out.Kinds, k)
	}
	slices.Sort(out.Kinds)
	if rootErr != nil {
		out.Error = termtext.OneLine(remedy.ErrorLine(rootErr))
	}
	return out
}

func (s *server) apiRows(w http.ResponseWriter, r *http.Request) {
	writeJSONAnswer(w, http.StatusOK, s.rowsPage(parseRowsQuery(r.URL.Query())))
}

// rootView is what the root's page template renders.
type rootView struct {
	Root     string
	ReadOnly bool
	Query    rowsQuery
	States   []string
	rowsPage
	First, Last int
	Prev, Next  string
	Flash       string
	Now         time.Time
	CSRF        string // the root page's CSRF token (serve_actions.go)
	Self        string // this page's address, to come back to after an action
	Failed      int    // failed jobs the filters choose (all pages): the bulk retry's
}

func (s *server) rootPage(w http.ResponseWriter, r *http.Request) {
	rq := parseRowsQuery(r.URL.Query())
	v := rootView{Root: s.cfg.root, ReadOnly: s.cfg.readOnly, Query: rq, rowsPage: s.rowsPage(rq),
		States: append(jobview.StateNames(), jobview.UnreadableState, jobview.NoStatusState, jobview.ScheduledState, jobview.RetryingState), Now: time.Now()}
	v.Query.Page = v.Page
	if v.Matched > 0 {
		v.First = (v.Page-1)*v.Size + 1
		v.Last = v.First + len(v.Rows) - 1
	}
	if v.Page > 1 {
		v.Prev = rq.with("page", strconv.Itoa(v.Page-1))
	}
	if v.Page < v.Pages {
		v.Next = rq.with("page", strconv.Itoa(v.Page+1))
	}
	v.CSRF = s.listCSRF()
	if !s.cfg.readOnly {
		v.Failed = s.failedCount(rq)
	}
	v.Self = rq.with("page", strconv.Itoa(v.Page))
	v.Flash = listFlash(r.URL.Query())
	s.render(w, "root.html", v)
}

// render executes a page template; a failure is a 500 with no page.
func (s *server) render(w http.ResponseWriter, name string, v any) {
	var b bytes.Buffer
	if err := s.pages.ExecuteTemplate(&b, name, v); err != nil {
		http.Error(w, "500 cannot render the page: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(b.Bytes())
}

// writeJSONAnswer answers v as JSON.
func writeJSONAnswer(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	jobview.WriteJSON(w, v)
}

// Limits of what a job's page shows: the formatted params, and the end of
// each log (the page's script then follows the log from there, logChunk
// at a time).
const (
	maxParamsShown = 64 << 10
	logShown       = 64 << 10
	logChunk       = 64 << 10
)

// field is one "name value" line of a job's page.
type field struct{ Name, Value string }

// logView is the end of one log on a job's page.
type logView struct {
	Name  string // stdout or stderr
	Found bool
	Text  string
	Note  string // what is not shown
	Next  int64  // where the page's script reads on from
	Error string
}

// jobView is what the job's page template renders.
type jobView struct {
	Root, ID       string
	Back           string // the list the page was opened from
	Row            pageRow
	Spec           *jobstore.JobSpec
	SpecError      string
	Params         string
	ParamsNote     string
	Labels         []field
	Fields         []field
	StatusError    string
	Cancel         string
	Attempts       []field
	Terminal       bool
	ReadOnly       bool
	CanCancel      bool
	CanRemove      bool
	CanRetry       bool
	CSRF           string
	Logs           []logView
	Flash          string
	SubmittedAgo   string
	Now            time.Time
	StatusUnknown  bool
	CancelRequests bool
}

func (s *server) jobPage(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	dir, ok := s.jobDir(id)
	if !ok {
		notFound(w)
		return
	}
	j := jobview.ReadJob(dir)
	if j.Spec == nil && !j.SpecInfo.Present && s.table.job(dir) == nil {
		notFound(w)
		return
	}
	en := jobstore.Entry{Dir: dir, Spec: j.Spec, Status: j.Status, Err: firstErr(j.SpecInfo.Err, j.StatusInfo.Err)}
	c, cinfo := jobview.ReadCancel(dir)
	row := newPageRow(en, &jobview.WatchedJob{Cancel: c, CancelInfo: cinfo})
	v := jobView{Root: s.cfg.root, ID: id, Back: listBack(r), Row: row, ReadOnly: s.cfg.readOnly, CSRF: s.csrfToken(id), Now: time.Now()}
	if j.SpecInfo.Err != nil {
		v.SpecError = termtext.OneLine(remedy.ErrorLine(j.SpecInfo.Err))
	}
	if j.StatusInfo.Err != nil {
		v.StatusError = termtext.OneLine(remedy.ErrorLine(j.StatusInfo.Err))
	}
	if sp := j.Spec; sp != nil {
		v.Spec = sp
		v.SubmittedAgo = jobview.FmtAge(time.Since(sp.SubmittedAt))
		v.Params, v.ParamsNote = formatParams(sp.Params)
		for _, k := range jobview.SortedKeys(sp.Labels) {
			v.Labels = append(v.Labels, field{k, sp.Labels[k]})
		}
	}
	st := j.Status
	v.Fields = statusFields(st)
	v.Attempts = attemptFields(st)
	v.Cancel = jobview.CancelRow(dir, st)
	v.Terminal = st != nil && st.State.Terminal()
	v.CanCancel = !s.cfg.readOnly && st != nil && !st.State.Terminal() && !cinfo.Present
	v.CanRemove = !s.cfg.readOnly && v.Terminal
	v.CanRetry = !s.cfg.readOnly && canRetry(st)
	for _, name := range []string{jobview.StdoutFile, jobview.StderrFile} {
		v.Logs = append(v.Logs, readLogView(dir, name))
	}
	switch r.URL.Query().Get("done") {
	case "cancel":
		v.Flash = "cancel requested"
	case "retry":
		v.Flash = "queued again"
	}
	s.render(w, "job.html", v)
}

// listBack is the root page a job's page was opened from, filters and
// all: as ?back= names it (the page reloaded by its script), or as the
// Referer tells (a page of this server); "/" otherwise.
func listBack(r *http.Request) string {
	if list, ok := listAddress(r.URL.Query().Get("back")); ok {
		return list
	}
	if ref, err := url.Parse(r.Referer()); err == nil && ref.Host == r.Host {
		if list, ok := listAddress(ref.RequestURI()); ok {
			return list
		}
	}
	return "/"
}

// listAddress is addr, an address of the root's page on this server
// ("/" with a query), without the query's token and flash (done, id);
// ok false when addr is anything else (another site, another page).
func listAddress(addr string) (string, bool) {
	u, err := url.Parse(addr)
	if addr == "" || err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Path != "/" {
		return "", false
	}
	q := u.Query()
	for _, k := range []string{"done", "id", "n", "token"} {
		q.Del(k)
	}
	if len(q) == 0 {
		return "/", true
	}
	return "/?" + q.Encode(), true
}

// withQuery is addr (a path, with or without a query) with the pairs of
// kv added to its query.
func withQuery(addr string, kv ...string) string {
	path, raw, _ := strings.Cut(addr, "?")
	q, _ := url.ParseQuery(raw)
	for i := 0; i+1 < len(kv); i += 2 {
		q.Set(kv[i], kv[i+1])
	}
	return path + "?" + q.Encode()
}

// firstErr is the first error that is not nil.
func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// formatParams is params as indented JSON, cut to maxParamsShown bytes,
// with a note saying so when it is cut.
func formatParams(params json.RawMessage) (text, note string) {
	if len(params) == 0 {
		return "", ""
	}
	if len(params) > maxParamsFormatted {
		return cutText(string(params), maxParamsShown), fmt.Sprintf("params are %s as JSON: the first %s are shown as written; /api/jobs/ID has them whole",
			byteSize(int64(len(params))), byteSize(maxParamsShown))
	}
	var b bytes.Buffer
	if err := json.Indent(&b, params, "", "  "); err != nil {
		b.Reset()
		b.Write(params)
	}
	if b.Len() <= maxParamsShown {
		return b.String(), ""
	}
	return cutText(b.String(), maxParamsShown), fmt.Sprintf("params are %s as JSON (%s formatted): the first %s are shown; /api/jobs/ID has them whole",
		byteSize(int64(len(params))), byteSize(int64(b.Len())), byteSize(maxParamsShown))
}

// maxParamsFormatted is the largest params a job's page formats; larger
// ones are shown as written, cut, so that a page costs no more than that.
const maxParamsFormatted = 1 << 20

// byteSize is n in bytes, KiB, MiB or GiB.
func byteSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// statusFields are a status as "name value" lines, as show prints them.
func statusFields(st *jobstore.JobStatus) []field {
	if st == nil {
		return nil
	}
	var out []field
	add := func(k, v string) { out = append(out, field{k, v}) }
	add("state", string(st.State))
	jobview.StatusRows(st, false, add)
	return out
}

// readLogView reads the end of one log of dir for the job's page.
func readLogView(dir jobstore.JobDir, name string) logView {
	v := logView{Name: strings.TrimSuffix(name, ".log")}
	t, found, err := jobview.ReadLogTail(dir, name, -1, logShown)
	v.Found = found
	if err != nil {
		v.Error = termtext.OneLine(remedy.ErrorLine(err))
		return v
	}
	text, next := logText(t)
	v.Text, v.Next = text, next
	if t.Cut {
		v.Note = fmt.Sprintf("%s is %s: its first %s are not shown", name, byteSize(t.Size), byteSize(t.Start))
	}
	return v
}

// logText is a tail's text as a page shows it (valid UTF-8, the controls
// but newline and tab escaped), and the offset after the last whole
// character in it.
func logText(t jobview.LogTail) (string, int64) {
	b := t.Text
	// A character cut by the end of what was read is read next time.
	for i := 1; i <= 3 && i <= len(b); i++ {
		c := b[len(b)-i]
		if c < 0x80 {
			break
		}
		if isRuneStart(c) {
			if !utf8.FullRune(b[len(b)-i:]) {
				b = b[:len(b)-i]
			}
			break
		}
	}
	lines := strings.Split(string(b), "\n")
	for i, l := range lines {
		cols := strings.Split(l, "\t")
		for c := range cols {
			cols[c] = termtext.EscapeTerminal(cols[c])
		}
		lines[i] = strings.Join(cols, "\t")
	}
	return strings.Join(lines, "\n"), t.Start + int64(len(b))
}

// logChunkJSON is /jobs/ID/log's answer: the log from ?from= on (at most
// logChunk bytes; Gap when bytes before them are skipped).
type logChunkJSON struct {
	Found bool   `json:"found"`
	Text  string `json:"text"`
	Start int64  `json:"start"`
	Next  int64  `json:"next"`
	Size  int64  `json:"size"`
	Gap   bool   `json:"gap"`
	Error string `json:"error"`
	Ended bool   `json:"ended"` // the job is in a final state
}

func (s *server) jobLog(w http.ResponseWriter, r *http.Request) {
	dir, ok := s.jobDir(r.PathValue("id"))
	if !ok {
		notFound(w)
		return
	}
	name := jobview.StdoutFile
	if r.URL.Query().Get("name") == "stderr" {
		name = jobview.StderrFile
	}
	from, err := strconv.ParseInt(r.URL.Query().Get("from"), 10, 64)
	if err != nil {
		from = -1
	}
	t, found, err := jobview.ReadLogTail(dir, name, from, logChunk)
	out := logChunkJSON{Found: found, Start: t.Start, Size: t.Size, Gap: t.Cut}
	if err != nil {
		out.Error = termtext.OneLine(remedy.ErrorLine(err))
	} else {
		out.Text, out.Next = logText(t)
	}
	if j := s.table.job(dir); j != nil && j.Status != nil {
		out.Ended = j.Status.State.Terminal()
	}
	writeJSONAnswer(w, http.StatusOK, out)
}

// parsePages parses the page templates.
func parsePages() *template.Template {
	funcs := template.FuncMap{
		"age": func(t *time.Time, now time.Time) string {
			if t == nil {
				return "-"
			}
			return jobview.FmtAge(now.Sub(*t))
		},
		"pct":   jobview.FmtProgress,
		"value": func(p *float64) string { return strconv.FormatFloat(*p, 'f', 4, 64) },
		"stamp": func(t *time.Time) string {
			if t == nil {
				return ""
			}
			return t.UTC().Format(time.RFC3339Nano)
		},
		"link":        func(rq rowsQuery, k, v string) string { return rq.with(k, v) },
		"due":         dueText,
		"rowActions":  rowActions,
		"states":      func() []string { return append(jobview.StateNames(), jobview.UnreadableState, jobview.NoStatusState) },
		"kindLink":    func(kind string) string { return rowsQuery{Order: "newest"}.with("kind", kind) },
		"sparkWidth":  func() int { return sparkWidth },
		"sparkHeight": func() int { return sparkHeight },
		"actionPath":  actionPath,
		"attempt":     rowAttemptText,
	}
	return template.Must(template.New("").Funcs(funcs).ParseFS(webFiles, "web/*.html"))
}
