package jobview

import (
	"slices"
	"strings"
	"time"

	"github.com/axqua/jobstore"
)

// This file is the choice of jobs that list, list --watch and serve's
// pages and API share: by state, kind, label and text, in an order, up to
// a limit.

// UnreadableState is the state a filter gives a job whose records cannot
// be read; NoStatusState is that of a job without status.json yet.
const (
	UnreadableState = "unreadable"
	NoStatusState   = "none"
)

// JobFilter chooses jobs. The zero value chooses every job.
type JobFilter struct {
	States []string          // any of these (EntryState, or WaitState at now); none: any
	Kinds  []string          // any of these; none: any
	Labels map[string]string // every one of these; none: any
	Text   string            // in the ID, kind, message, error, host or a label (any case)
	Newest bool              // newest submission first (default: oldest first, List's order)
	Limit  int               // at most this many (0: no limit)
	Now    func() time.Time  // the time WaitState is at; nil: time.Now
}

// EntryState is the state a filter and the pages give a job: its status's
// state, UnreadableState when a record cannot be read, NoStatusState when
// there is no status yet.
func EntryState(en jobstore.Entry) string {
	switch {
	case en.Err != nil:
		return UnreadableState
	case en.Status == nil:
		return NoStatusState
	}
	return string(en.Status.State)
}

// Match reports whether f chooses en (limit and order aside).
func (f *JobFilter) Match(en jobstore.Entry) bool {
	if len(f.States) > 0 && !slices.Contains(f.States, EntryState(en)) && !f.matchWait(en) {
		return false
	}
	kind := ""
	if en.Spec != nil {
		kind = en.Spec.Kind
	}
	if len(f.Kinds) > 0 && !slices.Contains(f.Kinds, kind) {
		return false
	}
	for k, v := range f.Labels {
		if en.Spec == nil || en.Spec.Labels[k] != v {
			return false
		}
	}
	if f.Text != "" && !containsFold(searchText(en), f.Text) {
		return false
	}
	return true
}

// matchWait reports whether one of f's states is en's WaitState.
func (f *JobFilter) matchWait(en jobstore.Entry) bool {
	if !slices.ContainsFunc(f.States, IsScheduleState) {
		return false
	}
	now := time.Now
	if f.Now != nil {
		now = f.Now
	}
	w := WaitState(en, now())
	return w != "" && slices.Contains(f.States, w)
}

// searchText is what a text filter looks in.
func searchText(en jobstore.Entry) string {
	var b strings.Builder
	b.WriteString(en.Dir.ID())
	if s := en.Spec; s != nil {
		b.WriteString("\x00" + s.Kind + "\x00" + s.SubmittedBy)
		for k, v := range s.Labels {
			b.WriteString("\x00" + k + "=" + v)
		}
	}
	if st := en.Status; st != nil {
		b.WriteString("\x00" + st.Message + "\x00" + st.Error + "\x00" + st.Host)
	}
	if en.Err != nil {
		b.WriteString("\x00" + en.Err.Error())
	}
	return b.String()
}

// containsFold reports whether sub is in s, ignoring case.
func containsFold(s, sub string) bool {
	return strings.Contains(strings.ToLower(s), strings.ToLower(sub))
}

// Apply returns the entries f chooses, in f's order (entries are in
// List's order, oldest first), at most f.Limit of them, and how many were
// chosen before the limit.
func (f *JobFilter) Apply(entries []jobstore.Entry) (chosen []jobstore.Entry, total int) {
	for _, en := range entries {
		if f.Match(en) {
			chosen = append(chosen, en)
		}
	}
	if f.Newest {
		slices.Reverse(chosen)
	}
	total = len(chosen)
	if f.Limit > 0 && len(chosen) > f.Limit {
		chosen = chosen[:f.Limit]
	}
	return chosen, total
}

// StateNames are the states a status may have.
func StateNames() []string {
	var out []string
	for _, s := range jobstore.States() {
		out = append(out, string(s))
	}
	return out
}
