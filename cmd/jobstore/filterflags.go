package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/jobview"
	"github.com/axqua/jobstore/cmd/jobstore/internal/remedy"
	"github.com/axqua/jobstore/cmd/jobstore/internal/termtext"
	"github.com/spf13/pflag"
)

// kindTypoDistance is how many edits from a kind a --kind value that
// names no job's kind may be to be suggested as a typo of it.
const kindTypoDistance = 2

// unknownKinds says, for each kind f asks for that no entry has, that no
// job under root is of that kind, with the kinds it is likely a typo of:
// "no job under ROOT is of kind "rendr": did you mean render?". With
// typosOnly, only of the kinds that are likely a typo.
func unknownKinds(f *jobview.JobFilter, root string, entries []jobstore.Entry, typosOnly bool) []string {
	var have []string
	for _, en := range entries {
		if en.Spec != nil && !slices.Contains(have, en.Spec.Kind) {
			have = append(have, en.Spec.Kind)
		}
	}
	var notes []string
	for _, k := range f.Kinds {
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
	for _, note := range unknownKinds(&jobview.JobFilter{Kinds: kinds}, root, entries, true) {
		fmt.Fprintf(w, "jobstore work: %s\n", termtext.EscapeTerminal(note))
	}
}

// filterFlags are the flags that set a JobFilter.
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

// filter is the JobFilter the flags set, or a usage error.
func (ff *filterFlags) filter(args []string) (*jobview.JobFilter, error) {
	known := filterStates()
	for _, s := range ff.states {
		if !slices.Contains(known, s) {
			return nil, remedy.Usagef("%s: unknown state %q (one of %s)", flagSpelling(args, "state"), s, strings.Join(known, ", "))
		}
	}
	switch {
	case *ff.limit < 0:
		return nil, remedy.Usagef("%s must not be negative, got %d", flagSpelling(args, "limit"), *ff.limit)
	case *ff.oldest && *ff.newest:
		return nil, remedy.Usagef("%s cannot be combined with %s", flagSpelling(args, "oldest"), flagSpelling(args, "newest"))
	}
	return &jobview.JobFilter{States: ff.states, Kinds: ff.kinds, Labels: ff.labels, Text: *ff.text,
		Newest: *ff.newest, Limit: *ff.limit}, nil
}

// filterStates are the values --state takes: the states a status may
// have, the states of queued jobs not yet due, jobview.UnreadableState and
// jobview.NoStatusState.
func filterStates() []string {
	return append(append(jobview.StateNames(), jobview.ScheduleStates()...), jobview.UnreadableState, jobview.NoStatusState)
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
