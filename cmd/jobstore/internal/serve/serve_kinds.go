package serve

import (
	"maps"
	"net/http"
	"slices"
	"time"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/jobview"
	"github.com/axqua/jobstore/cmd/jobstore/internal/remedy"
	"github.com/axqua/jobstore/cmd/jobstore/internal/termtext"
)

// This file is serve's summary by kind (/kinds, and /api/kinds for its
// script): each kind's jobs by state, and its ends over the last hour
// (the 5 minutes now is in, and the 11 before), as bars: the jobs that ended, and among them the ones
// that failed or were lost. The ends are read from the finished_at of the
// jobs under the root: a removed job is no longer counted, a retried one
// counts its latest end only.

// Shape of the ends' bars: summaryWindow of ends, summaryBucket a bar.
const (
	summaryWindow = time.Hour
	summaryBucket = 5 * time.Minute
	summaryBars   = int(summaryWindow / summaryBucket)
)

// Size of a sparkline, in SVG user units: a bar's width and gap, and the
// chart's height.
const (
	sparkBarWidth = 8
	sparkBarGap   = 2
	sparkHeight   = 24
	sparkWidth    = summaryBars * (sparkBarWidth + sparkBarGap)
)

// kindSummary is one kind's line of the summary.
type kindSummary struct {
	Kind   string         `json:"kind"` // "" for the line of every kind
	Counts map[string]int `json:"counts"`
	Total  int            `json:"total"`
	Ended  []int          `json:"ended"`  // jobs that ended, per bar, oldest first
	Failed []int          `json:"failed"` // of them, failed or lost
	// EndedSum and FailedSum are the hour's.
	EndedSum  int        `json:"ended_sum"`
	FailedSum int        `json:"failed_sum"`
	Bars      []sparkBar `json:"bars"`
}

// sparkBar is one bar of a sparkline, in SVG user units from the top
// left: the ends (X, Y, H) and the failures among them (FY, FH).
type sparkBar struct {
	X     int    `json:"x"`
	Y     int    `json:"y"`
	W     int    `json:"w"`
	H     int    `json:"h"`
	FY    int    `json:"fy"`
	FH    int    `json:"fh"`
	Title string `json:"title"`
}

// kindsPage is the summary, as /api/kinds sends it and /kinds renders it.
type kindsPage struct {
	All    kindSummary   `json:"all"`
	Kinds  []kindSummary `json:"kinds"`
	Since  time.Time     `json:"since"` // the first bar's start
	Bucket int           `json:"bucket_seconds"`
	Width  int           `json:"width"`
	Height int           `json:"height"`
	States []string      `json:"states"`
	Error  string        `json:"error"`
}

// summarize is the summary of entries at now.
func summarize(entries []jobstore.Entry, now time.Time) kindsPage {
	states := append(jobview.StateNames(), jobview.UnreadableState, jobview.NoStatusState)
	// The last bar is the one now is in, the first summaryBars-1 before.
	since := now.Truncate(summaryBucket).Add(-time.Duration(summaryBars-1) * summaryBucket)
	newLine := func(kind string) *kindSummary {
		l := &kindSummary{Kind: kind, Counts: map[string]int{}, Ended: make([]int, summaryBars), Failed: make([]int, summaryBars)}
		for _, s := range states {
			l.Counts[s] = 0
		}
		return l
	}
	all := newLine("")
	byKind := map[string]*kindSummary{}
	for _, en := range entries {
		kind := "?"
		if en.Spec != nil {
			kind = en.Spec.Kind
		}
		l := byKind[kind]
		if l == nil {
			if len(byKind) >= maxKinds {
				continue
			}
			l = newLine(kind)
			byKind[kind] = l
		}
		state := jobview.EntryState(en)
		for _, c := range []*kindSummary{all, l} {
			c.Counts[state]++
			c.Total++
		}
		st := en.Status
		if st == nil || !st.State.Terminal() || st.FinishedAt == nil || st.FinishedAt.Before(since) || st.FinishedAt.After(now) {
			continue
		}
		i := min(int(st.FinishedAt.Sub(since)/summaryBucket), summaryBars-1)
		failed := st.State == jobstore.Failed || st.State == jobstore.Lost
		for _, c := range []*kindSummary{all, l} {
			c.Ended[i]++
			c.EndedSum++
			if failed {
				c.Failed[i]++
				c.FailedSum++
			}
		}
	}
	out := kindsPage{All: *all, Kinds: []kindSummary{}, Since: since, Bucket: int(summaryBucket.Seconds()),
		Width: sparkWidth, Height: sparkHeight, States: states}
	for _, k := range slices.Sorted(maps.Keys(byKind)) {
		out.Kinds = append(out.Kinds, *byKind[k])
	}
	out.All.Bars = sparkBars(out.All, since)
	for i := range out.Kinds {
		out.Kinds[i].Bars = sparkBars(out.Kinds[i], since)
	}
	return out
}

// sparkBars are the bars of l's ends, scaled to the line's busiest bar.
func sparkBars(l kindSummary, since time.Time) []sparkBar {
	top := max(slices.Max(l.Ended), 1)
	bars := make([]sparkBar, summaryBars)
	for i := range bars {
		h := l.Ended[i] * sparkHeight / top
		if l.Ended[i] > 0 {
			h = max(h, 1)
		}
		fh := l.Failed[i] * sparkHeight / top
		if l.Failed[i] > 0 {
			fh = max(fh, 1)
		}
		from := since.Add(time.Duration(i) * summaryBucket)
		bars[i] = sparkBar{X: i * (sparkBarWidth + sparkBarGap), W: sparkBarWidth, Y: sparkHeight - h, H: h, FY: sparkHeight - fh, FH: fh,
			Title: from.UTC().Format("15:04") + "–" + from.Add(summaryBucket).UTC().Format("15:04") + " UTC: " +
				termtext.Plural(l.Ended[i], "end") + ", " + termtext.Plural(l.Failed[i], "failure")}
	}
	return bars
}

func (s *server) kindsSummary() kindsPage {
	entries, _, rootErr := s.table.snapshot()
	p := summarize(entries, time.Now())
	if rootErr != nil {
		p.Error = termtext.OneLine(remedy.ErrorLine(rootErr))
	}
	return p
}

func (s *server) apiKinds(w http.ResponseWriter, r *http.Request) {
	writeJSONAnswer(w, http.StatusOK, s.kindsSummary())
}

// kindsView is what kinds.html renders.
type kindsView struct {
	Root     string
	ReadOnly bool
	kindsPage
}

func (s *server) kindsPageHandler(w http.ResponseWriter, r *http.Request) {
	s.render(w, "kinds.html", kindsView{Root: s.cfg.root, ReadOnly: s.cfg.readOnly, kindsPage: s.kindsSummary()})
}
