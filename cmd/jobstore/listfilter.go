package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/axqua/jobstore"
	"github.com/spf13/pflag"
)

// This file is the choice of jobs that list, list --watch and serve's
// pages and API share: by state, kind, label and text, in an order, up to
// a limit.

// unreadableState is the state a filter gives a job whose records cannot
// be read; noStatusState is that of a job without status.json yet.
const (
	unreadableState = "unreadable"
	noStatusState   = "none"
)

// jobFilter chooses jobs. The zero value chooses every job.
type jobFilter struct {
	states []string          // any of these (entryState, or waitState at now); none: any
	kinds  []string          // any of these; none: any
	labels map[string]string // every one of these; none: any
	text   string            // in the ID, kind, message, error, host or a label (any case)
	newest bool              // newest submission first (default: oldest first, List's order)
	limit  int               // at most this many (0: no limit)
	now    func() time.Time  // the time waitState is at; nil: time.Now
}

// entryState is the state a filter and the pages give a job: its status's
// state, unreadableState when a record cannot be read, noStatusState when
// there is no status yet.
func entryState(en jobstore.Entry) string {
	switch {
	case en.Err != nil:
		return unreadableState
	case en.Status == nil:
		return noStatusState
	}
	return string(en.Status.State)
}

// match reports whether f chooses en (limit and order aside).
func (f *jobFilter) match(en jobstore.Entry) bool {
	if len(f.states) > 0 && !slices.Contains(f.states, entryState(en)) && !f.matchWait(en) {
		return false
	}
	kind := ""
	if en.Spec != nil {
		kind = en.Spec.Kind
	}
	if len(f.kinds) > 0 && !slices.Contains(f.kinds, kind) {
		return false
	}
	for k, v := range f.labels {
		if en.Spec == nil || en.Spec.Labels[k] != v {
			return false
		}
	}
	if f.text != "" && !containsFold(searchText(en), f.text) {
		return false
	}
	return true
}

// matchWait reports whether one of f's states is en's waitState.
func (f *jobFilter) matchWait(en jobstore.Entry) bool {
	if !slices.ContainsFunc(f.states, isScheduleState) {
		return false
	}
	now := time.Now
	if f.now != nil {
		now = f.now
	}
	w := waitState(en, now())
	return w != "" && slices.Contains(f.states, w)
}

// kindTypoDistance is how many edits from a kind a --kind value that
// names no job's kind may be to be suggested as a typo of it.
const kindTypoDistance = 2

// unknownKinds says, for each kind f asks for that no entry has, that no
// job under root is of that kind, with the kinds it is likely a typo of:
// "no job under ROOT is of kind "rendr": did you mean render?". With
// typosOnly, only of the kinds that are likely a typo.
func (f *jobFilter) unknownKinds(root string, entries []jobstore.Entry, typosOnly bool) []string {
	var have []string
	for _, en := range entries {
		if en.Spec != nil && !slices.Contains(have, en.Spec.Kind) {
			have = append(have, en.Spec.Kind)
		}
	}
	var notes []string
	for _, k := range f.kinds {
		if slices.Contains(have, k) {
			continue
		}
		note := fmt.Sprintf("no job under %s is of kind %q", root, k)
		s := suggestionsAmong(have, k, kindTypoDistance)
		if len(s) > 0 {
			note += ": did you mean " + orList(s) + "?"
		} else if typosOnly {
			continue
		}
		notes = append(notes, note)
	}
	return notes
}

// warnKindTypos writes to w, as work's, the notes of unknownKinds on the
// kinds likely mistyped: a worker may wait for a kind no job has yet, but
// one an edit from a kind the root's jobs have is likely a typo of it.
func warnKindTypos(w io.Writer, root string, kinds []string) {
	if len(kinds) == 0 {
		return
	}
	entries, _ := jobstore.List(root)
	for _, note := range (&jobFilter{kinds: kinds}).unknownKinds(root, entries, true) {
		fmt.Fprintf(w, "jobstore work: %s\n", escapeTerminal(note))
	}
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

// apply returns the entries f chooses, in f's order (entries are in
// List's order, oldest first), at most f.limit of them, and how many were
// chosen before the limit.
func (f *jobFilter) apply(entries []jobstore.Entry) (chosen []jobstore.Entry, total int) {
	for _, en := range entries {
		if f.match(en) {
			chosen = append(chosen, en)
		}
	}
	if f.newest {
		slices.Reverse(chosen)
	}
	total = len(chosen)
	if f.limit > 0 && len(chosen) > f.limit {
		chosen = chosen[:f.limit]
	}
	return chosen, total
}

// filterFlags are the flags that set a jobFilter.
type filterFlags struct {
	states, kinds listFlag
	labels        labelFlag
	text          *string
	limit         *int
	oldest        *bool
	newest        *bool
}

// addFilterFlags defines the filter flags on fs.
func addFilterFlags(fs *pflag.FlagSet) *filterFlags {
	ff := &filterFlags{labels: labelFlag{}}
	fs.Var(&ff.states, "state", "only jobs in this state: "+strings.Join(filterStates(), ", ")+" (scheduled: queued, not_before not reached; retrying: queued, a failed attempt's retry pending; none: no status yet); repeat or separate with commas for several")
	fs.Var(&ff.kinds, "kind", "only jobs of this kind; repeat or separate with commas for several")
	fs.Var(ff.labels, "label", "only jobs with this label, k=v; repeat: all of them")
	ff.text = fs.String("search", "", "only jobs whose ID, kind, submitter, label, message, error or host contains this text (any case)")
	ff.limit = fs.Int("limit", 0, "show at most N jobs (0: all)")
	ff.oldest = fs.Bool("oldest", false, "oldest submission first (the default)")
	ff.newest = fs.Bool("newest", false, "newest submission first")
	return ff
}

// filter is the jobFilter the flags set, or a usage error.
func (ff *filterFlags) filter(args []string) (*jobFilter, error) {
	known := filterStates()
	for _, s := range ff.states {
		if !slices.Contains(known, s) {
			return nil, usagef("%s: unknown state %q (one of %s)", flagSpelling(args, "state"), s, strings.Join(known, ", "))
		}
	}
	switch {
	case *ff.limit < 0:
		return nil, usagef("%s must not be negative, got %d", flagSpelling(args, "limit"), *ff.limit)
	case *ff.oldest && *ff.newest:
		return nil, usagef("%s cannot be combined with %s", flagSpelling(args, "oldest"), flagSpelling(args, "newest"))
	}
	return &jobFilter{states: ff.states, kinds: ff.kinds, labels: ff.labels, text: *ff.text,
		newest: *ff.newest, limit: *ff.limit}, nil
}

// filterStates are the values --state takes: the states a status may
// have, the states of queued jobs not yet due, unreadableState and
// noStatusState.
func filterStates() []string {
	return append(append(stateNames(), scheduleStates()...), unreadableState, noStatusState)
}

// stateNames are the states a status may have.
func stateNames() []string {
	var out []string
	for _, s := range jobstore.States() {
		out = append(out, string(s))
	}
	return out
}

// listFlag is a flag that may be repeated, each value a comma-separated
// list.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

// Type is pflag's name for the value: "value", as the usage text shows it.
func (l *listFlag) Type() string { return "value" }

func (l *listFlag) Set(s string) error {
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v == "" {
			return fmt.Errorf("empty value")
		}
		*l = append(*l, v)
	}
	return nil
}
